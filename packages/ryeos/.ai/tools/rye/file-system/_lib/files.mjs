// rye:signed:2026-11-28T04:11:37Z:6e8848e87b0482d8732d4f98907dfeebd2f15db34f54ea488b7d19d93fb9de72:ADUCPCWU4qxXoE-S3lU1gaG6CbkENz-tUZ-8C2hR-JXnHBjcExUGW2Bm8n-drJnVo4BWLDjpYiUUbRiIQpO2Ag==:007af625371e6e71
// Reading and writing whole text files with the limits every file-system tool shares.
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isInside, pathError, protectedDirs, refuseProtected } from './paths.mjs';
import { ToolError } from './tool.mjs';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;

export function formatBytes(n) {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${n} bytes`;
}

/** A NUL byte in the first 8 KB marks a file as binary (the heuristic git and grep use). */
export function isBinary(buffer) {
  return buffer.subarray(0, 8192).includes(0);
}

/** stat() with ENOENT → undefined. */
export async function statOrUndefined(path) {
  try {
    return await stat(path);
  } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw pathError(error, path);
  }
}

const OPEN_FOR_READING = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The message for a failed open of `shown` for reading. */
function openError(error, shown) {
  if (error.code === 'ENOENT') return new ToolError(`File not found: ${shown}`);
  if (error.code === 'ELOOP') return new ToolError(`${shown} is a symbolic link that changed while it was opened`);
  if (error.code === 'ENXIO' || error.code === 'EAGAIN') return new ToolError(`${shown} is not a regular file`);
  return pathError(error, shown);
}

/** Throws unless the file actually opened (`opened`, its real path) is one a tool may read. */
function checkOpened(opened, shown, root, guarded) {
  if (root !== undefined && !isInside(root, opened)) throw new ToolError(`Path '${shown}' is outside the project root ${root}`);
  refuseProtected(opened, shown, root, guarded);
}

/**
 * Opens `real` for reading without following a symlink in its last component, then checks the
 * file actually opened (through its descriptor) is the one that was checked: still inside the
 * project and outside protected folders. A path component swapped for a symlink between the check
 * and the open (a race a concurrent process can win) is caught here instead of read. Sync calls
 * on a descriptor: for one file, far cheaper than threadpool round trips (see paths.mjs).
 */
function openChecked(real, shown, root, guarded) {
  let fd;
  try {
    fd = openSync(real, OPEN_FOR_READING);
  } catch (error) {
    throw openError(error, shown);
  }
  try {
    checkOpened(openedPath(fd, real), shown, root, guarded);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Where an open descriptor really points: /proc/self/fd on Linux, else the same inode check. */
export function openedPath(fd, real) {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    const [byFd, byPath] = [fstatSync(fd), statSync(real)];
    if (byFd.dev !== byPath.dev || byFd.ino !== byPath.ino) throw new ToolError(`${real} changed while it was opened`);
    return real;
  }
}

function readUpTo(fd, size) {
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const read = readSync(fd, buffer, filled, size - filled, filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

/**
 * The bytes of a checked file (openChecked), once `check` has seen its stat and not thrown, and
 * its stat: up to the size `check` saw, no more (a file growing meanwhile is not read past it).
 * `guarded`: the protected folders (protectedDirs), when the call has them already.
 */
export function readChecked(real, shown, root, check, guarded = protectedDirs(process.env, root)) {
  const fd = openChecked(real, shown, root, guarded);
  try {
    const info = fstatSync(fd);
    check(info);
    return { buffer: readUpTo(fd, info.size), info };
  } finally {
    closeSync(fd);
  }
}

/** Reads a UTF-8 text file, refusing directories, files over 10 MB and binary files. */
export async function readTextFile(real, shown, root, guarded) {
  const { buffer, info } = readChecked(real, shown, root, (info) => {
    if (info.isDirectory()) throw new ToolError(`${shown} is a directory (use rye/file-system/ls)`);
    if (!info.isFile()) throw new ToolError(`${shown} is not a regular file`);
    if (info.size > MAX_FILE_BYTES)
      throw new ToolError(
        `${shown} is ${formatBytes(info.size)}; files over ${formatBytes(MAX_FILE_BYTES)} are refused`,
      );
  }, guarded);
  if (isBinary(buffer)) throw new ToolError(`${shown} is a binary file (it contains NUL bytes)`);
  return { text: buffer.toString('utf8'), mode: info.mode };
}
