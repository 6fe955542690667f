/**
 * A thread's signed files shared through its store (`ThreadStore.records`), so a worker on
 * another machine takes it up: the transcript is copied before any tool call has effects and at
 * the thread's end or hand-back, `thread.json` once signed. Restoring writes a copy into the
 * thread's folder (temp + rename) only where it adds to what is there; every reader then verifies
 * the signatures as it would for the local file, so a copy changed in the database is refused.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@ryeos/lillux';
import type { SharedRecordName, SharedThreadRecords } from '../store/types.js';
import { ensureThreadDir } from './paths.js';
import { THREAD_JSON } from './thread-json.js';
import { TRANSCRIPT_JSONL } from './transcript.js';

async function readIfThere(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Copies a thread's file to the store, when it has one; a missing file is not copied. */
export async function shareRecord(
  records: SharedThreadRecords | undefined,
  dir: string,
  threadId: string,
  name: SharedRecordName,
): Promise<void> {
  if (!records) return;
  const content = await readIfThere(join(dir, name));
  if (content) await records.put(threadId, name, content);
}

/**
 * The transcript's sharer for one run: copies are made one at a time, and only when the file grew
 * since the last (several calls of a turn wait for one copy).
 */
export function transcriptSharer(
  records: SharedThreadRecords,
  dir: string,
  threadId: string,
  flush: () => void,
): () => Promise<void> {
  let shared = -1;
  let queue: Promise<void> = Promise.resolve();
  return () => {
    const next = queue.then(async () => {
      flush();
      const content = await readIfThere(join(dir, TRANSCRIPT_JSONL));
      if (!content || content.length === shared) return;
      await records.put(threadId, TRANSCRIPT_JSONL, content);
      shared = content.length;
    });
    // A failed copy fails its caller; the next one tries again.
    queue = next.catch(() => undefined);
    return next;
  };
}

/**
 * Brings the store's copies of a thread's files into its folder: `thread.json` where the folder has
 * none, the transcript where the folder's is missing or shorter (a transcript only grows).
 * Answers the names restored.
 */
export async function restoreRecords(
  records: SharedThreadRecords | undefined,
  stateRoot: string,
  threadId: string,
): Promise<SharedRecordName[]> {
  if (!records) return [];
  const restored: SharedRecordName[] = [];
  for (const name of [THREAD_JSON, TRANSCRIPT_JSONL] as const) {
    const copy = await records.get(threadId, name);
    if (!copy) continue;
    const dir = ensureThreadDir(stateRoot, threadId);
    const local = await readIfThere(join(dir, name));
    const adds = name === TRANSCRIPT_JSONL ? !local || local.length < copy.length : !local;
    if (!adds) continue;
    await writeFileAtomic(join(dir, name), copy, { mode: 0o600 });
    restored.push(name);
  }
  return restored;
}
