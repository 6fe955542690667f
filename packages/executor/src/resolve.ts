/**
 * Finds an item file in the spaces (spec items §1.5): first match wins, lower spaces are
 * shadowed, and nothing outside a space's type directory is ever followed.
 */
// Sync fs on purpose: a resolution is dozens of tiny stat calls, and a threadpool round trip
// per call cost more than the syscalls themselves (measured: buildChain 8 ms → <2 ms).
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { realPath } from './real-paths.js';
import type { SignableKind } from './refs.js';
import { canonicalRef, normalizeId, TYPE_DIRS } from './refs.js';
import type { Space, SpaceName, Spaces } from './spaces.js';

export interface ResolvedItem {
  kind: SignableKind;
  id: string;
  path: string;
  extension: string;
  space: Space;
  /** Same-id files in lower spaces that this match hides. */
  shadowed: { path: string; space: string }[];
  /** Space labels visited, in order. */
  searched: string[];
}

export interface ResolveOptions {
  /** Search only this space and lower ones (executor scoping). */
  from?: SpaceName;
  /** Search exactly the spaces of this name (every system bundle for `system`). */
  only?: SpaceName;
  /** Search exactly this one space (one system bundle). */
  within?: Space;
  /** Also collect shadowed files (costs a stat per lower space). */
  collectShadowed?: boolean;
}

const tooLong = () =>
  new RyeError('VALIDATION', 'Item id too long: the file name it names exceeds what the file system allows', {
    hint: 'Use a shorter id (each segment under 255 bytes).',
  });

/** The error for a path the OS refuses outright (the caller's bad id, said plainly); else rethrows. */
function refusedPath(path: string, error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENAMETOOLONG') throw tooLong();
  if (code === 'ELOOP') {
    throw new RyeError('VALIDATION', `Item path loops through symbolic links: ${path}`, {
      hint: 'Replace the looping symlink with a real folder or file.',
    });
  }
  if (code === 'EACCES') {
    throw new RyeError('PERMISSION', `Cannot read ${path}: permission denied`, {
      hint: 'Check the permissions of the .ai folder and its parents.',
    });
  }
  throw error;
}

/**
 * Whether an item file exists at `path`. A path that cannot name a file (a file used as a
 * folder) is simply absent; one the OS refuses outright is the caller's bad id, said plainly.
 */
export function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    refusedPath(path, error);
  }
}

/**
 * The entries of `dir`, or none when it does not exist (or is a file). One directory read answers
 * for every extension an id may have: a stat per extension per space was most of a warm call's
 * system calls.
 */
function listing(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    refusedPath(dir, error);
  }
}

/** The files named `base` + one of `extensions` in `dir`, in extension order. */
function filesNamed(
  dir: string,
  base: string,
  extensions: readonly string[],
): { path: string; extension: string }[] {
  if (!extensions.length) return [];
  const entries = listing(dir).filter((entry) => entry.name.startsWith(base));
  if (!entries.length) return [];
  const files: { path: string; extension: string }[] = [];
  for (const extension of extensions) {
    const entry = entries.find((e) => e.name === base + extension);
    if (!entry) continue;
    const path = join(dir, entry.name);
    // A link (or a file system that does not say) is followed, as a stat would.
    if (entry.isFile() || (!entry.isDirectory() && isFile(path))) files.push({ path, extension });
  }
  return files;
}

/**
 * Refuses an id whose file names the file system could not hold, as a stat of them would (the
 * item's folder is only read, so its own file name is never handed to the OS).
 */
function checkIdFits(id: string, extensions: readonly string[]): void {
  const segments = id.split('/');
  const shortest = extensions.length ? Math.min(...extensions.map((e) => Buffer.byteLength(e))) : 0;
  const last = segments.length - 1;
  if (segments.some((segment, i) => Buffer.byteLength(segment) + (i === last ? shortest : 0) > 255))
    throw tooLong();
}

/** Returns the real path of a match, refusing one that leaves its space's type directory. */
function realInside(path: string, typeRoot: string, id: string): string {
  const real = realPath(path);
  const realRoot = realPath(typeRoot);
  if (real !== realRoot && !real.startsWith(realRoot + sep)) {
    throw new RyeError('INTEGRITY', `Refusing item '${id}': ${path} resolves to ${real}, outside its space`, {
      hint: 'Replace the symlink with the file itself, inside the .ai/ directory of its space.',
      details: { id, path, real },
    });
  }
  return real;
}

export function typeRootOf(space: Space, kind: SignableKind): string {
  return join(space.base, '.ai', TYPE_DIRS[kind]);
}

/**
 * Two files of one id in one space (`noop.py` beside `noop.js`): which one is meant cannot be
 * told, so resolution refuses instead of picking by extension order (issue 11, item 10a).
 */
export function ambiguousItemError(kind: SignableKind, id: string, files: readonly string[], space?: string) {
  return new RyeError(
    'VALIDATION',
    `Ambiguous item '${canonicalRef(kind, id)}': ${files.length} files${space ? ` in ${space} space` : ''} have this id: ${files.join(' and ')}`,
    {
      hint: 'Keep one file per item id: remove or rename the others (then sign the one you keep).',
      details: { id, files: [...files] },
    },
  );
}

/**
 * The file of `id` in one space. With `unique`, every extension is tried and a second file of
 * the same id is an error naming all of them; without it (shadowed lower spaces) the first wins.
 */
function findIn(
  space: Space,
  kind: SignableKind,
  id: string,
  extensions: readonly string[],
  unique: boolean,
) {
  const typeRoot = typeRootOf(space, kind);
  const folders = id.split('/');
  const base = folders.pop()!;
  const files = filesNamed(join(typeRoot, ...folders), base, extensions);
  let found: { path: string; extension: string } | undefined;
  const others: string[] = [];
  for (const { path, extension } of files) {
    if (found) {
      others.push(path);
      continue;
    }
    // The real path is what gets verified and run, so re-pointing a link in between changes nothing.
    found = { path: realInside(path, typeRoot, id), extension };
    if (!unique) break;
  }
  if (found && others.length) {
    throw ambiguousItemError(kind, id, [join(typeRoot, id + found.extension), ...others], space.name);
  }
  return found;
}

/** Resolves one item; undefined when no space holds it. */
/**
 * The first item of this id in `from` and the spaces below it, or undefined; never ambiguous
 * (the first file found wins). Synchronous, for a failing item's shadow check.
 */
export function findFrom(
  spaces: Spaces,
  kind: SignableKind,
  rawId: string,
  extensions: readonly string[],
  from: SpaceName,
): { path: string; space: Space } | undefined {
  const id = normalizeId(rawId);
  for (const space of spaces.ordered(from)) {
    const match = findIn(space, kind, id, extensions, false);
    if (match) return { path: match.path, space };
  }
  return undefined;
}

export async function resolveItem(
  spaces: Spaces,
  kind: SignableKind,
  rawId: string,
  extensions: readonly string[],
  options: ResolveOptions = {},
): Promise<ResolvedItem | undefined> {
  const id = normalizeId(rawId);
  checkIdFits(id, extensions);
  const candidates = options.within
    ? [options.within]
    : options.only
      ? spaces.ordered().filter((s) => s.name === options.only)
      : spaces.ordered(options.from);
  const searched: string[] = [];
  let found: ResolvedItem | undefined;
  for (const space of candidates) {
    if (found && !options.collectShadowed) break;
    searched.push(space.label);
    const match = findIn(space, kind, id, extensions, !found);
    if (!match) continue;
    if (found) found.shadowed.push({ path: match.path, space: space.label });
    else found = { kind, id, ...match, space, shadowed: [], searched };
  }
  return found;
}
