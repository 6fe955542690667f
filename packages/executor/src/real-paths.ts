/**
 * Real paths and containment, for the run's files. Within one operation a path's real path is
 * looked up once (observations.ts): a warm call asks for the same dozen real paths several times
 * each. realpath(3) costs a readlink per path component, and a snapshot's files lie ~15 folders
 * deep, so within an operation a path is resolved from its folder's real path (itself resolved
 * once) and one lstat: a warm call made ~150 readlinks, now ~30 system calls.
 *
 * A young process asks realpath(3) instead: while node's JS is still interpreted, each lstatSync
 * of that walk costs ~50 µs, and one call into C ~25 µs for the whole path (~4 ms of a cold
 * `rye execute`). The walk takes over once the process has made `YOUNG_LOOKUPS` lookups.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { inOperation, observedOnce } from './observations.js';

/** Lookups a process makes with realpath(3) before walking (see above). */
const YOUNG_LOOKUPS = 256;
let youngLookupsLeft = YOUNG_LOOKUPS;

/** For tests: sets how many lookups are still made with realpath(3) (0: walk from now on). */
export function setYoungLookups(count: number): void {
  youngLookupsLeft = count;
}

/** The real path (throws as realpathSync.native does when it cannot be resolved). */
export function realPath(path: string): string {
  const seen = observedOnce(`realpath:${path}`, (): { real: string } | { error: unknown } => {
    try {
      return { real: resolveReal(path) };
    } catch (error) {
      return { error };
    }
  });
  if ('error' in seen) throw seen.error;
  return seen.real;
}

/**
 * A path that is not a link is its folder's real path plus its name. Only for a normalized
 * absolute path without a trailing separator (a `..` after a link is the link target's parent,
 * which text cannot tell) and inside an operation, where each folder is resolved once; anything
 * else asks realpath(3).
 */
function resolveReal(path: string): string {
  if (youngLookupsLeft > 0) {
    youngLookupsLeft--;
    return realpathSync.native(path);
  }
  const parent = dirname(path);
  // A trailing separator makes lstat follow a link to a folder: such a path goes to realpath(3).
  if (
    parent === path ||
    !inOperation() ||
    !isAbsolute(path) ||
    normalize(path) !== path ||
    path.endsWith(sep)
  )
    return realpathSync.native(path);
  if (lstatSync(path).isSymbolicLink()) return realpathSync.native(path);
  return join(realPath(parent), basename(path));
}

/** The real path, or undefined when it cannot be resolved (missing, no permission). */
export function realOrUndefined(path: string): string | undefined {
  try {
    return realPath(path);
  } catch {
    return undefined;
  }
}

/** The real path, or the path itself when it cannot be resolved. */
export function realOr(path: string): string {
  return realOrUndefined(path) ?? path;
}

/** Whether `child` is `parent` or below it (both absolute, already real when that matters). */
export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
