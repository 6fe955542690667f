// rye:signed:2026-11-22T02:20:09Z:fc953787fd741fa15e72d67a520e954ad37a429db2eaf058f74382eeb7bd3f21:SlGpDH4Z3TO-TQ_9sSEBFn4pjTpygy6omiPtjm-OOZ266iAIeJqqlgUFi89TA9R245fcqw9M0OcUD11ZR30cCA==:007af625371e6e71
// Listing files under a directory with tinyglobby, the same way for glob and grep.
import { glob } from 'tinyglobby';
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
export function listFiles(baseReal, pattern, { onlyFiles = true } = {}) {
  checkPattern(pattern);
  return glob(pattern, {
    cwd: baseReal,
    absolute: true,
    dot: true,
    onlyFiles,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore: DEFAULT_IGNORE,
  });
}
