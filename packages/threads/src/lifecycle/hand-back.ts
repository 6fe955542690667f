/**
 * A run handed back between turns (the worker running it is stopping): nothing is finalized. Its
 * transcript is covered by a checkpoint up to here and closed; its row stays `running` and its
 * reservation active, so the next process takes it up from its transcript, as after a crash but
 * with no call in flight.
 */
import { shareRecord } from '../persistence/shared-records.js';
import { TRANSCRIPT_JSONL } from '../persistence/transcript.js';
import { HANDED_BACK } from '../runner/turn-limits.js';
import type { ThreadResult } from '../thread-request.js';
import type { RunOutcome } from './run.js';

export async function handBackThread(run: RunOutcome): Promise<ThreadResult> {
  run.writer.close(run.cost.turns);
  // Without this copy the next worker still has the one made before the last call ran.
  await shareRecord(run.place.store.records, run.dir, run.place.threadId, TRANSCRIPT_JSONL).catch(
    () => undefined,
  );
  return {
    success: false,
    status: 'running',
    handed_back: true,
    thread_id: run.place.threadId,
    directive: run.place.directiveId,
    cost: run.cost,
    error: HANDED_BACK,
    timing: run.timing,
  };
}
