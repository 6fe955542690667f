// rye:signed:2026-11-27T19:31:56Z:d3eb178d375b9503d08820bd6d0be86b57110b36d26f0fef0b53360322678464:_kKIZhiquTdM2ILDmM2WEQIhQWeyqUDASlmD8xz5gBWFSYpmMgOtJ8RUd93h0w26Mhpvzm9FM--n2ZpZW9XLDw==:007af625371e6e71
// Listing files under a directory with tinyglobby, the same way for glob and grep.
import { glob } from 'tinyglobby';
import { isInside, protectedDirs } from './paths.mjs';
import { ToolError } from './tool.mjs';

/** Skipped unless a pattern names them: dependency trees and VCS metadata. */
export const DEFAULT_IGNORE = ['**/node_modules/**', '**/.git/**'];

/** Refuses patterns that could reach outside the base directory. */
export function checkPattern(pattern) {
  if (pattern.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(pattern))
    throw new ToolError(
      `Absolute glob patterns are not allowed ('${pattern}'); use path for the base directory`,
    );
  if (pattern.split(/[\\/]/).includes('..'))
    throw new ToolError(`Glob patterns may not contain '..' ('${pattern}'); use path for the base directory`);
}

/**
 * Real paths of the files under `baseReal` matching `pattern`. Symbolic links are neither
 * followed nor returned, so a link inside the project cannot lead the search outside it.
 */
export async function listFiles(baseReal, pattern, { onlyFiles = true, root = undefined } = {}) {
  checkPattern(pattern);
  const hidden = protectedDirs(process.env, root);
  const found = await glob(pattern, {
    cwd: baseReal,
    absolute: true,
    dot: true,
    onlyFiles,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore: DEFAULT_IGNORE,
  });
  // Keys, trust stores and ryeos state (the user's, the project's) are never listed.
  return found.filter((file) => !hidden.some((dir) => isInside(dir, file)));
}
