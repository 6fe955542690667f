// rye:signed:2026-11-22T02:20:09Z:78f64382ec899a019cc49df620221f770c0623c77121f4680d498286c19ba3f2:18bqluVxx3h__3rmRDD6CFMn6Ziqp_koXMJyIloPDdTCb9caNojOfXBeWP9xDdOBkONVTwxuArjvQ4CdsrLABg==:007af625371e6e71
// Confinement of path parameters to the project root. Every path is resolved to its real
// location (symlinks followed, including those of missing targets and their parents) and the
// tools then work on that real path, so what was checked is what gets read or written.
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolError } from './tool.mjs';

/** The project root as a real path. */
export async function projectRoot(projectPath) {
  try {
    return await realpath(projectPath);
  } catch {
    throw new ToolError(`Project path ${projectPath} does not exist`);
  }
}

/** True when `path` is `root` or below it (both absolute and normalised). */
export function isInside(root, path) {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Where `path` really points, whether or not it exists: the realpath of the longest existing
 * prefix plus the missing rest. A dangling symlink is followed to its target.
 */
async function realLocation(path, hops = 0) {
  if (hops > 40) throw new ToolError(`Too many levels of symbolic links: ${path}`);
  try {
    return await realpath(path);
  } catch (error) {
    if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = await realLocation(parent, hops);
  const here = resolve(realParent, basename(path));
  const info = await lstat(here).catch(() => undefined);
  if (info?.isSymbolicLink()) return realLocation(resolve(realParent, await readlink(here)), hops + 1);
  return here;
}

/**
 * Resolves a path parameter (relative to the project root; absolute only inside it) to its real
 * location, refusing anything outside the root. Returns `{real, shown}`: `shown` is the path
 * relative to the root, for messages and results.
 */
export async function resolveInside(root, path) {
  const absolute = isAbsolute(path) ? resolve(path) : resolve(root, path);
  const real = await realLocation(absolute);
  if (!isInside(root, real)) throw new ToolError(`Path '${path}' is outside the project root ${root}`);
  return { real, shown: shownPath(root, real) };
}

/** A path for results: relative to the root, '.' for the root itself, '/' separators. */
export function shownPath(root, real) {
  return relative(root, real).split(sep).join('/') || '.';
}
