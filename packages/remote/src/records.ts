/**
 * A forked thread's records, read by the run worker (confined to its run folder) before it
 * exits: its folder (thread.json, transcript.jsonl, …) and its knowledge transcript, as relative
 * path → bytes. Only regular files, never through a link, each and all together bounded: a run's
 * sparse 1 GB file is refused by its size, never read into memory.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
} from 'node:fs';
import { join, relative, sep } from 'node:path';
import { threadDir, threadsStateRoot } from '@ryeos/threads';

/** A thread id names folders: only the characters the threads layer gives them. */
const THREAD_ID = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** Most files a thread's records may count. */
const MAX_RECORD_FILES = 10_000;

export interface ThreadRecords {
  files: Map<string, Buffer>;
  /** Set (to the bytes seen so far) when the records are over the limit: then `files` is empty. */
  overLimit?: number;
}

/** Where an open file really is: a folder swapped for a link on the way shows here. */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * The file's bytes if it is a regular file inside `root` of at most `room` bytes; its size if
 * larger. O_NOFOLLOW guards the last name only, so where the open file really is is checked too.
 */
function readRegular(path: string, root: string, room: number): Buffer | number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || !openedPath(fd)?.startsWith(`${root}/`)) return undefined;
    if (stat.size > room) return stat.size;
    // Read at most room + 1 bytes: a file that grew since fstat is still caught.
    const buffer = Buffer.alloc(Math.min(stat.size + 1, room + 1));
    let length = 0;
    while (length < buffer.length) {
      const got = readSync(fd, buffer, length, buffer.length - length, null);
      if (got === 0) break;
      length += got;
    }
    return length > room ? length : buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** Every regular file under `dir`, iteratively (no depth limit), never entering a link. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const pending = [dir];
  while (pending.length > 0 && found.length <= MAX_RECORD_FILES) {
    const current = pending.pop()!;
    let names: string[];
    try {
      if (!lstatSync(current).isDirectory()) continue;
      names = readdirSync(current);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(current, name);
      try {
        const stat = lstatSync(path);
        if (stat.isDirectory()) pending.push(path);
        else if (stat.isFile()) found.push(path);
      } catch {
        // Gone since the listing: nothing to read.
      }
    }
  }
  return found;
}

/**
 * `runRoot` is the run folder's real path as the server made it (not resolved again here, since
 * the run may have swapped a folder below it for a link).
 */
export function readThreadRecords(
  projectPath: string,
  runRoot: string,
  threadId: string,
  maxBytes: number,
): ThreadRecords {
  const files = new Map<string, Buffer>();
  if (!THREAD_ID.test(threadId) || threadId.split('/').includes('..')) return { files };
  let folder: string;
  try {
    folder = threadDir(threadsStateRoot(projectPath), threadId);
  } catch {
    return { files }; // a linked folder on the way: nothing of it is read
  }
  const paths = [
    ...filesUnder(folder),
    join(projectPath, '.ai', 'knowledge', 'agent', 'threads', `${threadId}.md`),
  ];
  if (paths.length > MAX_RECORD_FILES) return { files: new Map(), overLimit: maxBytes + 1 };
  let total = 0;
  for (const path of paths) {
    const read = readRegular(path, runRoot, maxBytes - total);
    if (read === undefined) continue;
    if (typeof read === 'number') return { files: new Map(), overLimit: total + read };
    total += read.length;
    files.set(relative(projectPath, path).split(sep).join('/'), read);
  }
  return { files };
}
