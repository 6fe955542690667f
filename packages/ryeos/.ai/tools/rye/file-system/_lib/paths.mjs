// rye:signed:2026-11-28T22:57:51Z:5a6e919732a4e1b7c0405163e99cfee6cb0fe47d69baa62985ab321cb948a167:ttvKTmObtXPOua3s7RGqVt1y0QY16zbPKAOuEyvnG1SPEhG7dJ7jjhWHD0dtytQEXp36Z3-mcHNfNdagdMHCCQ==:007af625371e6e71
// Confinement of path parameters to the project root. Every path is resolved to its real
// location (symlinks followed, including those of missing targets and their parents) and the
// tools then work on that real path, so what was checked is what gets read or written.
// An existing path is resolved with one sync call, far cheaper than a threadpool round trip (a
// warm read spent most of its time waking threadpool threads); a path with a missing part takes
// the slow way, async, so that a pathological one never holds up the worker's other calls.
import { lstatSync, realpathSync } from 'node:fs';
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from './tool.mjs';

/** The project root as a real path; never the file-system root itself. */
export async function projectRoot(projectPath) {
  let root;
  try {
    root = realpathSync.native(projectPath);
  } catch {
    throw new ToolError(`Project path ${projectPath} does not exist`);
  }
  if (dirname(root) === root) throw new ToolError('The project cannot be the file-system root: pass the project folder');
  return root;
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
async function realLocation(path) {
  try {
    return realpathSync.native(path);
  } catch (error) {
    if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
  }
  return missingLocation(path);
}

const MAX_LINKS = 40;
/** Longer paths are refused (PATH_MAX): a chain of links could otherwise grow one without end. */
const MAX_PATH = 4096;

/** A path's realpath, or undefined when a part of it is missing. */
async function realpathOrMissing(path) {
  try {
    return await realpath(path);
  } catch (error) {
    if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
    return undefined;
  }
}

/**
 * realLocation for a path with a missing part: the deepest existing ancestor (found with one
 * stat per missing level, not a realpath per prefix), the missing rest below it, and a dangling
 * link at the first missing level followed, within one budget of links for the whole path. A
 * loop, not recursion: however deep the path, the stack stays flat.
 */
async function missingLocation(path) {
  for (let links = 0; ; links++) {
    const real = await realpathOrMissing(path);
    if (real !== undefined) return real;
    const missing = [];
    let parent = path;
    do {
      missing.unshift(basename(parent));
      parent = dirname(parent);
    } while (dirname(parent) !== parent && !(await stat(parent).then(() => true, () => false)));
    const realParent = (await realpathOrMissing(parent)) ?? parent;
    const here = resolve(realParent, missing[0]);
    const info = await lstat(here).catch(() => undefined);
    if (!info?.isSymbolicLink()) return join(here, ...missing.slice(1));
    if (links >= MAX_LINKS) throw new ToolError(`Too many levels of symbolic links: ${path}`);
    // Gone or no longer a link since the lstat: resolved again from the top.
    const target = await readlink(here).catch(() => undefined);
    if (target === undefined) continue;
    path = resolve(realParent, target, ...missing.slice(1));
    // Said in the caller's terms (resolveInside: pathError).
    if (path.length >= MAX_PATH) throw Object.assign(new Error('path too long'), { code: 'ENAMETOOLONG' });
  }
}

/**
 * Places no file tool reads or writes, whatever the project is (it may be the home directory):
 * user-space config (the signing key, the trust store, bundles.yaml — registering a bundle
 * trusts its keys —, hooks), the user's .env (credentials, and `${VAR}` of user and system
 * items), and ryeos state (snapshots, wherever they are, the MCP token), the user's and the project's (`root`: its
 * thread registry and budget ledger, which a model granted file writes must not rewrite, and the
 * cancel markers of other threads). The host names the user space (USER_SPACE) and an
 * overridden key folder (RYE_SIGNING_KEY_DIR).
 */
export function protectedDirs(env = process.env, root = undefined) {
  // The real path of each, resolved from its parent's (one lstat each below a shared parent,
  // where a realpath per folder costs a readlink per path component).
  const ai = realOrResolved(join(env.USER_SPACE || homedir(), '.ai'));
  const dirs = ['config', '.env', 'state'].map((name) => childReal(ai, name));
  if (root !== undefined) dirs.push(childReal(childReal(root, '.ai'), 'state'));
  if (env.RYE_SIGNING_KEY_DIR) dirs.push(realOrResolved(env.RYE_SIGNING_KEY_DIR));
  // Snapshots move to the temp folder when the user space cannot be written: protected there too
  // (a project at /tmp could otherwise replace the bytes a long-lived host runs), as the host
  // names it and as this process would (the two temp folders may differ).
  dirs.push(realOrResolved(join(tmpdir(), `ryeos-snapshots-${process.getuid?.() ?? 'user'}`)));
  if (env.RYE_SNAPSHOT_FALLBACK) dirs.push(realOrResolved(env.RYE_SNAPSHOT_FALLBACK));
  // Likewise the python bytecode cache's temp-folder fallback, beside the snapshots'.
  const uid = process.getuid?.() ?? 'user';
  for (const temp of new Set([tmpdir(), env.RYE_SNAPSHOT_FALLBACK && dirname(env.RYE_SNAPSHOT_FALLBACK)]))
    if (temp) dirs.push(realOrResolved(join(temp, `ryeos-pycache-${uid}`)));
  if (env.RYE_SNAPSHOT_DIR) dirs.push(realOrResolved(dirname(env.RYE_SNAPSHOT_DIR)));
  return dirs;
}

/** The real path of `path`, or the path itself (absolute, normalised) when it cannot be resolved. */
function realOrResolved(path) {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

/** The real path of `name` in the folder whose real path is `parentReal` (missing: as named). */
function childReal(parentReal, name) {
  const path = join(parentReal, name);
  try {
    return lstatSync(path).isSymbolicLink() ? realOrResolved(path) : path;
  } catch {
    return path;
  }
}

/**
 * Throws when `real` is inside a protected folder (see protectedDirs; `root`: the project's;
 * `dirs`: protectedDirs already computed).
 */
export function refuseProtected(real, shown, root = undefined, dirs = protectedDirs(process.env, root)) {
  for (const dir of dirs) {
    if (isInside(dir, real)) {
      throw new ToolError(`'${shown}' is in ${dir}, which holds your keys, trust store, user config, credentials or ryeos state: file tools never touch it`);
    }
  }
}

/** A typed message for errors the OS gives about a path itself. */
export function pathError(error, path) {
  const messages = {
    ENAMETOOLONG: `Path '${path}' is too long for the file system`,
    ELOOP: `Path '${path}' loops through symbolic links`,
    ENOTDIR: `Path '${path}' goes through something that is not a directory`,
    EACCES: `Permission denied: '${path}'`,
    EISDIR: `'${path}' is a directory`,
  };
  const message = messages[error?.code];
  return message ? new ToolError(message) : error;
}

/**
 * Resolves a path parameter (relative to the project root; absolute only inside it) to its real
 * location, refusing anything outside the root or in a protected folder. Returns `{real, shown,
 * guarded}`: `shown` is the path relative to the root, for messages and results; `guarded`, the
 * protected folders it was checked against (protectedDirs), for the checks later in the call.
 */
export async function resolveInside(root, path) {
  if (path.includes('\0')) throw new ToolError(`Path '${path.replaceAll('\0', '\\0')}' contains a NUL byte`);
  const absolute = isAbsolute(path) ? resolve(path) : resolve(root, path);
  let real;
  try {
    real = await realLocation(absolute);
  } catch (error) {
    throw pathError(error, path);
  }
  if (!isInside(root, real)) throw new ToolError(`Path '${path}' is outside the project root ${root}`);
  // A name that is not valid UTF-8 reads back as U+FFFD, which names another file (or none).
  if (real.includes('\uFFFD'))
    throw new ToolError(`Path '${path}' leads through a name that is not valid UTF-8; rename it first`);
  const shown = shownPath(root, real);
  const guarded = protectedDirs(process.env, root);
  refuseProtected(real, shown, root, guarded);
  return { real, shown, guarded };
}

/** A path for results: relative to the root, '.' for the root itself, '/' separators. */
export function shownPath(root, real) {
  return relative(root, real).split(sep).join('/') || '.';
}
