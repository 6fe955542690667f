// rye:signed:2026-11-28T03:21:28Z:942d1a5c05ad5175fd405baefa1d79645b34ef943bd3c8a7202b55d3efd8d250:zyJ-pN6UiUqpi6un4ZE_ks96ehLCZwmJNgQyHEOkIbUay45012ZCNxeXAVTALqs3ffKXsAQ2-KOcB_Av0Q53AA==:007af625371e6e71
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
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { openedPath } from './files.mjs';
import { isInside, pathError, refuseProtected } from './paths.mjs';
import { ToolError } from './tool.mjs';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;
const OPEN_FOLDER = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
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
 * Returns the number of bytes written. Nothing is left behind when it fails.
 */
export function atomicWrite(real, shown, content, mode, root) {
  const data = Buffer.from(content, 'utf8');
  const name = basename(real);
  const temp = `.${name}.rye-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const fileMode = mode !== undefined ? mode & 0o7777 : 0o644;
  try {
    if (pinningAvailable()) writePinned(dirname(real), name, temp, data, fileMode, shown, root);
    else writeByPath(dirname(real), name, temp, data, fileMode, shown, root);
  } catch (error) {
    throw writeError(error, shown);
  }
  return data.length;
}

function writePinned(dir, name, temp, data, fileMode, shown, root) {
  const folder = openFolder(root, dir);
  try {
    const file = openSync(inFolder(folder, temp), CREATE_TEMP, 0o600);
    try {
      writeFileSync(file, data);
      fchmodSync(file, fileMode);
    } finally {
      closeSync(file);
    }
    try {
      // The folder may have been moved since it was opened (a rename of it, which needs no link):
      // where it is now must still be a place this tool may write.
      checkFolder(readlinkSync(`/proc/self/fd/${folder}`), name, shown, root);
      renameSync(inFolder(folder, temp), inFolder(folder, name));
    } catch (error) {
      unlinkQuietly(inFolder(folder, temp));
      throw error;
    }
  } finally {
    closeSync(folder);
  }
}

/**
 * A descriptor of `dir` (below `root`, both real paths), opened from the root one component at a
 * time without following links, creating the missing ones: the folder that was checked, whatever
 * is swapped on its path meanwhile.
 */
function openFolder(root, dir) {
  let fd = openSync(root, O_RDONLY | O_DIRECTORY);
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) !== root) throw new ToolError('the project folder moved');
    for (const part of relative(root, dir).split(sep)) {
      if (part === '') continue;
      const child = openOrMakeFolder(fd, part);
      closeSync(fd);
      fd = child;
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

function openOrMakeFolder(parent, part) {
  const path = inFolder(parent, part);
  try {
    return openSync(path, OPEN_FOLDER);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  try {
    mkdirSync(path);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error; // made meanwhile: opened (and checked) below
  }
  return openSync(path, OPEN_FOLDER);
}

/** Throws unless `name` in the folder now at `folderPath` is a place this tool may write. */
function checkFolder(folderPath, name, shown, root) {
  if (!isInside(root, folderPath)) throw new ToolError(`'${shown}': its folder moved out of the project`);
  refuseProtected(join(folderPath, name), shown, root);
}

/**
 * Without /proc (not Linux): the temp file is created without following links and where it
 * landed is checked through its descriptor (an inode comparison), then renamed by path. A folder
 * swapped between that check and the rename is not caught here.
 */
function writeByPath(dir, name, temp, data, fileMode, shown, root) {
  mkdirSync(dir, { recursive: true });
  const tempPath = join(dir, temp);
  try {
    const file = openSync(tempPath, CREATE_TEMP, 0o600);
    try {
      checkFolder(dirname(openedPath(file, tempPath)), name, shown, root);
      writeFileSync(file, data);
      fchmodSync(file, fileMode);
    } finally {
      closeSync(file);
    }
    renameSync(tempPath, join(dir, name));
  } catch (error) {
    unlinkQuietly(tempPath);
    throw error;
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
  };
  const reason = messages[error?.code];
  return reason ? new ToolError(`'${shown}' was not written: ${reason}`) : pathError(error, shown);
}
