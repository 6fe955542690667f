/**
 * Finds an item file in the spaces (spec items §1.5): first match wins, lower spaces are
 * shadowed, and nothing outside a space's type directory is ever followed.
 */
// Sync fs on purpose: a resolution is dozens of tiny stat calls, and a threadpool round trip
// per call cost more than the syscalls themselves (measured: buildChain 8 ms → <2 ms).
import { realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { observedOnce } from './observations.js';
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

/**
 * Whether an item file exists at `path`. A path that cannot name a file (a file used as a
 * folder) is simply absent; one the OS refuses outright is the caller's bad id, said plainly.
 */
export function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return false;
    if (code === 'ENAMETOOLONG') {
      throw new RyeError(
        'VALIDATION',
        'Item id too long: the file name it names exceeds what the file system allows',
        {
          hint: 'Use a shorter id (each segment under 255 bytes).',
        },
      );
    }
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
}

/** Returns the real path of a match, refusing one that leaves its space's type directory. */
function realInside(path: string, typeRoot: string, id: string): string {
  const real = realpathSync.native(path);
  const realRoot = observedOnce(`real:${typeRoot}`, () => realpathSync.native(typeRoot));
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
  let found: { path: string; extension: string } | undefined;
  const others: string[] = [];
  for (const extension of extensions) {
    const path = join(typeRoot, id + extension);
    if (!isFile(path)) continue;
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
export async function resolveItem(
  spaces: Spaces,
  kind: SignableKind,
  rawId: string,
  extensions: readonly string[],
  options: ResolveOptions = {},
): Promise<ResolvedItem | undefined> {
  const id = normalizeId(rawId);
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
