/** Real paths (one system call each: realpathSync.native) and containment, for the run's files. */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';

/** The real path, or undefined when it cannot be resolved (missing, no permission). */
export function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
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
