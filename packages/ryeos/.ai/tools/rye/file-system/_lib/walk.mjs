// rye:signed:2026-11-24T22:47:15Z:67c1f810fd0f1e1116df15047934b7cce1a30108981db3889bf0d936df3dd242:nzn1ghBWyJYPbFZM6ceSXqvKQ_gHD7i0hVGQk6ONHv5Z6ApyIO6aQJ4Z6WdGPDKagnHPp7jX-ZOJFXbGqy7FCg==:007af625371e6e71
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
export async function listFiles(baseReal, pattern, { onlyFiles = true } = {}) {
  checkPattern(pattern);
  const hidden = protectedDirs();
  const found = await glob(pattern, {
    cwd: baseReal,
    absolute: true,
    dot: true,
    onlyFiles,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore: DEFAULT_IGNORE,
  });
  // Keys, trust stores and ryeos state are never listed (the project may be the home folder).
  return found.filter((file) => !hidden.some((dir) => isInside(dir, file)));
}
