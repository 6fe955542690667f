// rye:signed:2026-11-28T04:43:00Z:fed4cb9467aafe95df0ece2a08ed037d43106297d4955dd802378023571af283:C8qEvMizRgeG3Bb9lz_Wuaei7Rkbnj3dPQUcMEWdBC_c0extdnMWqyNtE5M8rF-4xLfqPfIPrfZu2DaRyckNDg==:007af625371e6e71
// Writing a whole file atomically, pinned to the folder that was checked.
//
// The path was resolved and checked (paths.mjs), but a concurrent process can still swap a folder
// on it for a symlink before the write (renameat2(RENAME_EXCHANGE) does it in one step). A write
// that looks its path up again by name would land wherever the link points, ~/.ai/config among
// them. So on Linux the folder is opened one component at a time from the project root, never
// following a link, and everything after (mkdir, the temp file, the rename, the cleanup) goes
// through that descriptor: /proc/self/fd/<fd>/<name> is resolved by the kernel from the open
// folder, as mkdirat/openat/renameat would be (Node has none of the *at calls).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  mkdirSync,
  openSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { openedPath } from './files.mjs';
import { isInside, pathError, protectedDirs, refuseProtected } from './paths.mjs';
import { ToolError } from './tool.mjs';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;
// O_PATH (Linux; node does not export it): a folder opened only to name it, so one the user may
// write to but not list (mode 0333) can still be written into.
const O_PATH = 0o10000000;
const OPEN_FOLDER = O_PATH | O_DIRECTORY | O_NOFOLLOW;
const CREATE_TEMP = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

let canPin;
/** Whether folders can be pinned through /proc/self/fd (Linux with /proc mounted). */
function pinningAvailable() {
  canPin ??= process.platform === 'linux' && existsSync('/proc/self/fd');
  return canPin;
}

const inFolder = (fd, name) => `/proc/self/fd/${fd}/${name}`;

/**
 * Writes `content` to `real` (a checked real path inside `root`; `shown` names it in messages)
 * atomically: a temporary file in the same folder, then a rename over the target. Creates missing
 * parent folders and keeps `mode` (the mode of a file it replaces; 0o644 for a new one).
 * Returns the number of bytes written. When it fails, nothing it made is left: no temp file, no
 * folder it created.
 */
export function atomicWrite(real, shown, content, mode, root) {
  const data = Buffer.from(content, 'utf8');
  // Not the target's name: a name near NAME_MAX must still leave room for the temp file's.
  const temp = `.rye-${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  const fileMode = mode !== undefined ? mode & 0o7777 : 0o644;
  try {
    if (pinningAvailable()) writePinned(dirname(real), basename(real), temp, data, fileMode, shown, root);
    else writeByPath(dirname(real), basename(real), temp, data, fileMode, shown, root);
  } catch (error) {
    throw writeError(error, shown);
  }
  return data.length;
}

function writePinned(dir, name, temp, data, fileMode, shown, root) {
  const chain = openFolders(root, dir);
  const folder = chain.at(-1).fd;
  let written = false;
  try {
    // Computed before the last look at where the folder is, so that look and the rename are
    // as close together as they can be from node.
    const protectedNow = protectedDirs(process.env, root);
    writeTemp(inFolder(folder, temp), data, fileMode);
    // The folder may have been moved since it was opened (a rename of it, which needs no link):
    // where it is now must still be a place this tool may write.
    checkFolder(readlinkSync(`/proc/self/fd/${folder}`), name, shown, root, protectedNow);
    renameSync(inFolder(folder, temp), inFolder(folder, name));
    written = true;
  } finally {
    if (!written) {
      unlinkQuietly(inFolder(folder, temp)); // first: a folder this call made is then empty
      removeCreated(chain);
    }
    for (const { fd } of chain) closeSync(fd);
  }
}

/**
 * Descriptors of the folders from `root` down to `dir` (both real paths), opened one component at
 * a time without following links, creating the missing ones (`created`: made by this call): the
 * folder that was checked, whatever is swapped on its path meanwhile.
 */
function openFolders(root, dir) {
  const chain = [{ fd: openSync(root, O_PATH | O_DIRECTORY), created: false, name: '' }];
  try {
    if (readlinkSync(`/proc/self/fd/${chain[0].fd}`) !== root) throw new ToolError('the project folder moved');
    for (const part of relative(root, dir).split(sep)) {
      if (part !== '') chain.push(openOrMakeFolder(chain.at(-1).fd, part));
    }
    return chain;
  } catch (error) {
    removeCreated(chain);
    for (const { fd } of chain) closeSync(fd);
    throw error;
  }
}

function openOrMakeFolder(parent, name) {
  const path = inFolder(parent, name);
  try {
    return { fd: openSync(path, OPEN_FOLDER), created: false, name };
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  let created = true;
  try {
    mkdirSync(path);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error; // made meanwhile: opened (and checked) below
    created = false;
  }
  return { fd: openSync(path, OPEN_FOLDER), created, name };
}

/** Removes the folders this call created, deepest first (each only if still empty). */
function removeCreated(chain) {
  for (let i = chain.length - 1; i > 0; i--) {
    if (!chain[i].created) break;
    try {
      rmdirSync(inFolder(chain[i - 1].fd, chain[i].name));
    } catch {
      break; // no longer empty, or gone: left as it is
    }
  }
}

/** Throws unless `name` in the folder now at `folderPath` is a place this tool may write. */
function checkFolder(folderPath, name, shown, root, protectedNow) {
  if (!isInside(root, folderPath)) throw new ToolError(`'${shown}': its folder moved out of the project`);
  refuseProtected(join(folderPath, name), shown, root, protectedNow);
}

/**
 * Without /proc (not Linux): the temp file is created without following links and where it
 * landed is checked through its descriptor (an inode comparison), then renamed by path. A folder
 * swapped between that check and the rename is not caught here.
 */
function writeByPath(dir, name, temp, data, fileMode, shown, root) {
  mkdirSync(dir, { recursive: true });
  const tempPath = join(dir, temp);
  let written = false;
  try {
    writeTemp(tempPath, data, fileMode, (file) =>
      checkFolder(dirname(openedPath(file, tempPath)), name, shown, root),
    );
    renameSync(tempPath, join(dir, name));
    written = true;
  } finally {
    if (!written) unlinkQuietly(tempPath);
  }
}

/** Creates the temp file at `path` (never through a link), checks it (`check`), writes `data`. */
function writeTemp(path, data, fileMode, check = undefined) {
  const file = openSync(path, CREATE_TEMP, 0o600);
  try {
    check?.(file);
    writeFileSync(file, data);
    fchmodSync(file, fileMode);
  } finally {
    closeSync(file);
  }
}

function unlinkQuietly(path) {
  try {
    unlinkSync(path);
  } catch {
    // already gone, or its folder is: nothing of ours is left
  }
}

/** A typed message for a failed write; nothing was written when this is thrown. */
function writeError(error, shown) {
  if (error instanceof ToolError) {
    return error.message.startsWith(`'${shown}'`) ? error : new ToolError(`'${shown}' was not written: ${error.message}`);
  }
  const messages = {
    ELOOP: 'a folder on its path was replaced by a symbolic link meanwhile',
    ENOTDIR: 'a part of its path is not a folder (or was swapped for a link meanwhile)',
    ENOENT: 'its folder was removed meanwhile',
    EISDIR: 'it is a directory',
    ENOTEMPTY: 'it is a directory',
    EEXIST: 'it is a directory',
    ENOSPC: 'the file system is full',
    EDQUOT: 'the disk quota is exhausted',
    EROFS: 'the file system is read-only',
    EFBIG: 'it is larger than this process may write (ulimit -f)',
  };
  const reason = messages[error?.code];
  if (reason) return new ToolError(`'${shown}' was not written: ${reason}`);
  const typed = pathError(error, shown);
  if (typed instanceof ToolError) return typed;
  // Any other error of the system (EFBIG, EPERM, EMFILE, …): its code and message, never a stack.
  return new ToolError(`'${shown}' was not written: ${error?.code ?? 'error'}: ${error?.message ?? error}`);
}
