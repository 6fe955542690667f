/**
 * Real paths (one system call each: realpathSync.native) and containment, for the run's files.
 * Within one operation a path's real path is looked up once (observations.ts): a warm call asked
 * for the same dozen real paths several times each, a readlink per path component every time,
 * and every step of one operation now sees the same answer.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { observedOnce } from './observations.js';

/** The real path (throws as realpathSync.native does when it cannot be resolved). */
export function realPath(path: string): string {
  const seen = observedOnce(`realpath:${path}`, (): { real: string } | { error: unknown } => {
    try {
      return { real: realpathSync.native(path) };
    } catch (error) {
      return { error };
    }
  });
  if ('error' in seen) throw seen.error;
  return seen.real;
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
