/**
 * A forked thread's records, read out of the run's temp project before it is removed: its
 * folder (thread.json, transcript.jsonl, …) and its knowledge transcript, as relative path →
 * bytes. Only regular files are read, never through a link, so a run cannot make the server hand
 * back a file from outside its own folder.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { threadDir, threadsStateRoot } from '@ryeos/threads';

/** A thread id names folders: only the characters the threads layer gives them. */
const THREAD_ID = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

function readRegular(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : undefined;
  } finally {
    closeSync(fd);
  }
}

function filesUnder(dir: string): string[] {
  let names: string[];
  try {
    if (!lstatSync(dir).isDirectory()) return [];
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isDirectory()) return filesUnder(path);
    return stat.isFile() ? [path] : [];
  });
}

export function threadRecordFiles(projectPath: string, threadId: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!THREAD_ID.test(threadId) || threadId.split('/').includes('..')) return files;
  let folder: string;
  try {
    folder = threadDir(threadsStateRoot(projectPath), threadId);
  } catch {
    return files; // a linked folder on the way: nothing of it is read
  }
  const paths = [
    ...filesUnder(folder),
    join(projectPath, '.ai', 'knowledge', 'agent', 'threads', `${threadId}.md`),
  ];
  for (const path of paths) {
    const bytes = readRegular(path);
    if (bytes) files.set(relative(projectPath, path).split(sep).join('/'), bytes);
  }
  return files;
}
