/**
 * Finds an item file in the spaces (spec items §1.5): first match wins, lower spaces are
 * shadowed, and nothing outside a space's type directory is ever followed.
 */
import { realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { SignableKind } from './refs.js';
import { normalizeId, TYPE_DIRS } from './refs.js';
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
  /** Search exactly this one space. */
  only?: SpaceName;
  /** Also collect shadowed files (costs a stat per lower space). */
  collectShadowed?: boolean;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Refuses a match whose real path (after symlinks) leaves its space's type directory. */
async function assertInside(path: string, typeRoot: string, id: string): Promise<void> {
  const [real, realRoot] = await Promise.all([realpath(path), realpath(typeRoot)]);
  if (real !== realRoot && !real.startsWith(realRoot + sep)) {
    throw new RyeError('INTEGRITY', `Refusing item '${id}': ${path} resolves to ${real}, outside its space`, {
      hint: 'Replace the symlink with the file itself, inside the .ai/ directory of its space.',
      details: { id, path, real },
    });
  }
}

export function typeRootOf(space: Space, kind: SignableKind): string {
  return join(space.base, '.ai', TYPE_DIRS[kind]);
}

async function findIn(space: Space, kind: SignableKind, id: string, extensions: readonly string[]) {
  const typeRoot = typeRootOf(space, kind);
  for (const extension of extensions) {
    const path = join(typeRoot, id + extension);
    if (await isFile(path)) {
      await assertInside(path, typeRoot, id);
      return { path, extension };
    }
  }
  return undefined;
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
  const candidates = options.only
    ? spaces.ordered().filter((s) => s.name === options.only)
    : spaces.ordered(options.from);
  const searched: string[] = [];
  let found: ResolvedItem | undefined;
  for (const space of candidates) {
    if (found && !options.collectShadowed) break;
    searched.push(space.label);
    const match = await findIn(space, kind, id, extensions);
    if (!match) continue;
    if (found) found.shadowed.push({ path: match.path, space: space.label });
    else found = { kind, id, ...match, space, shadowed: [], searched };
  }
  return found;
}
