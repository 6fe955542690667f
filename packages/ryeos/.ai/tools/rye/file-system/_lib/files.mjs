// rye:signed:2026-11-22T02:20:09Z:438bf05cb1924c1958cc026dbfac1a9b702c224077569c02906fd5c9a5f3931f:CX7df3dpJ-T98BcSXkAnJ3Nae8xhjaZRvWEjh_atcB60pQ-7WULl4gEGIRbBRx-0CuFPYsQM7O9jMtm7gA6YBA==:007af625371e6e71
// Reading and writing whole text files with the limits every file-system tool shares.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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
    throw error;
  }
}

/** Reads a UTF-8 text file, refusing directories, files over 10 MB and binary files. */
export async function readTextFile(real, shown) {
  const info = await statOrUndefined(real);
  if (!info) throw new ToolError(`File not found: ${shown}`);
  if (info.isDirectory()) throw new ToolError(`${shown} is a directory (use rye/file-system/ls)`);
  if (!info.isFile()) throw new ToolError(`${shown} is not a regular file`);
  if (info.size > MAX_FILE_BYTES)
    throw new ToolError(
      `${shown} is ${formatBytes(info.size)}; files over ${formatBytes(MAX_FILE_BYTES)} are refused`,
    );
  const buffer = await readFile(real);
  if (isBinary(buffer)) throw new ToolError(`${shown} is a binary file (it contains NUL bytes)`);
  return { text: buffer.toString('utf8'), mode: info.mode };
}

/**
 * Writes `content` atomically: a temporary file in the same directory (so rename stays on one
 * file system), then rename over the target. Creates missing parent directories and keeps the
 * mode of a file it replaces. Returns the number of bytes written.
 */
export async function atomicWrite(real, content, mode) {
  const dir = dirname(real);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(real)}.rye-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const data = Buffer.from(content, 'utf8');
  try {
    await writeFile(temp, data, { flag: 'wx' });
    if (mode !== undefined) await chmod(temp, mode & 0o7777);
    await rename(temp, real);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  return data.length;
}
