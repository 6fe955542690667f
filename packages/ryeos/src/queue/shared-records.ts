/**
 * The database's copies of threads' signed files, brought into their folders on this machine where
 * it lacks them (it never ran the thread, or not this far). Every reader verifies them as it would
 * the files this machine wrote itself.
 */
import type { ThreadStoreOpener } from '@ryeos/threads';
import type { Rye } from '../rye.js';

export async function restoreShared(
  rye: Rye,
  opener: ThreadStoreOpener,
  threadIds: readonly string[],
): Promise<void> {
  const { restoreRecords, threadsStateRoot } = await import('@ryeos/threads');
  const store = await opener(rye.projectPath);
  try {
    for (const id of threadIds) await restoreRecords(store.records, threadsStateRoot(rye.projectPath), id);
  } finally {
    await store.close();
  }
}
