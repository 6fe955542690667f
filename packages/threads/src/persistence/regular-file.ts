/**
 * Thread records (thread.json, transcript.jsonl) lie in the project, which a cloned repository
 * ships: a record is read only when it is a regular file reached without a link, within a size
 * bound, so a link to /dev/zero, a FIFO or a file outside the project is refused, not read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { RyeError } from '@ryeos/lillux';

/** Largest thread.json read: the runner writes a few KiB. */
export const THREAD_JSON_MAX_BYTES = 4 * 1024 * 1024;

/** Largest transcript read whole (to verify it); a reader of slices never needs more. */
export const TRANSCRIPT_MAX_BYTES = 1024 * 1024 * 1024;

/** O_NONBLOCK: a FIFO planted as a record opens at once (and is then refused) instead of waiting for a writer. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

export interface RegularFile {
  fd: number;
  size: number;
}

function refused(path: string, what: string): RyeError {
  return new RyeError('INTEGRITY', `${path} is ${what}, not a thread record`, {
    hint: 'A thread record is a regular file the runner wrote; remove this one or the thread folder (a repository may have planted it).',
    details: { path },
  });
}

/** Opens a record (the caller closes `fd`); undefined when there is none. */
export function openRegularFile(path: string): RegularFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw refused(path, 'a symbolic link');
    throw error;
  }
  const info = fstatSync(fd);
  if (!info.isFile()) {
    closeSync(fd);
    throw refused(path, 'a special file (a device, FIFO or socket)');
  }
  return { fd, size: info.size };
}

/** Up to `length` bytes of an open record from `position` (fewer at its end). */
export function readRange(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, buffer, read, length - read, position + read);
    if (n === 0) break;
    read += n;
  }
  return buffer.subarray(0, read);
}

/** A whole record, at most `maxBytes`; undefined when there is none. */
export function readRegularFile(path: string, maxBytes: number): Buffer | undefined {
  const file = openRegularFile(path);
  if (!file) return undefined;
  try {
    if (file.size > maxBytes) {
      throw new RyeError('LIMIT', `${path} is ${file.size} bytes, more than the ${maxBytes} read here`, {
        hint: 'A record this large was not written by the runner at this size; inspect or remove it.',
        details: { path, size: file.size, max_bytes: maxBytes },
      });
    }
    return readRange(file.fd, 0, file.size);
  } finally {
    closeSync(file.fd);
  }
}
