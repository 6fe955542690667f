/**
 * Finalize, the last phase of a thread: spend settled, the result and cost recorded, the signed
 * `thread.json` rewritten with the final status, the cancel marker handed on to a continuation,
 * `after_complete` hooks, the final checkpoint as the transcript's last write, and the status
 * last of all, so a waiter that sees it final finds everything else in place.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clipText } from '@ryeos/lillux';
import { CANCEL_MARKER } from '../orchestration/control.js';
import { ensureThreadDir } from '../persistence/paths.js';
import { shareRecord } from '../persistence/shared-records.js';
import { THREAD_JSON, writeThreadJson } from '../persistence/thread-json.js';
import { TRANSCRIPT_JSONL } from '../persistence/transcript.js';
import { failureCodes } from '../result-codes.js';
import type { LoopResult } from '../runner/loop.js';
import { type ThreadCost, type ThreadStatus, ZERO_COST } from '../store/types.js';
import type { ThreadResult } from '../thread-request.js';
import type { BudgetOutcome, Reservation } from './register.js';
import { renderTranscript } from './render-transcript.js';
import type { RunOutcome } from './run.js';
import type { RunPlace } from './run-types.js';
import { nowIso } from './setup-failure.js';

const RESULT_MAX = 4000;

export async function finalizeThread(run: RunOutcome, reservation: Reservation): Promise<ThreadResult> {
  const { place, cost, writer, result } = run;
  const { store, threadId } = place;
  const status: ThreadStatus = result.status ?? (result.success ? 'completed' : 'error');
  const error = result.success ? undefined : result.error || 'Unknown error (no message provided)';

  // Spend: own, then the subtree up to the budget parent of record (its parent, or the ancestor
  // that adopted it when its parent ended first), then the unused reservation back — in one
  // transaction, so no reader sees the spend counted twice.
  await reservation.settle(cost.spend, budgetOutcome(status));

  const { text: resultText, truncated } = clippedResult(result.result ?? '');
  await store.registry.updateCostSnapshot(threadId, cost);
  await store.registry.setResult(threadId, {
    cost,
    ...(result.outputs ? { outputs: result.outputs } : {}),
    ...(error ? { error } : {}),
    ...(resultText ? { result: resultText } : {}),
  });
  const continuationId =
    typeof result.continuation_thread_id === 'string' ? result.continuation_thread_id : undefined;
  const record = run.prepared.record;
  await writeThreadJson(
    run.dir,
    {
      ...record,
      status,
      updated_at: nowIso(),
      cost,
      ...(result.outputs ? { outputs: result.outputs } : {}),
      ...(error ? { error } : {}),
      ...(continuationId ? { continuation_thread_id: continuationId } : {}),
    },
    place.signer,
  );
  if (status === 'continued' && continuationId)
    await handOnCancellation(place, continuationId, run.cancelMarker);
  rmSync(run.cancelMarker, { force: true });

  writer.write(`thread_${status}`, { cost, ...(error ? { error } : {}) });
  await run.hooks
    .control('after_complete', { thread_id: threadId, cost, project_path: run.host.projectPath, status })
    .catch(() => null);
  // The final checkpoint is the transcript's very last write.
  writer.close(cost.turns);
  await renderTranscript(run.host, run.dir, { ...record, status, cost }, place.signer);
  // Best effort: the thread has ended either way; only a later continuation elsewhere needs them.
  await shareRecord(store.records, run.dir, threadId, THREAD_JSON).catch(() => undefined);
  await shareRecord(store.records, run.dir, threadId, TRANSCRIPT_JSONL).catch(() => undefined);
  // The status last: a waiter that sees it final finds the result, the signed record and the
  // finished transcript already there.
  await store.registry.updateStatus(threadId, status);
  return threadResult(run, status, resultText, truncated, error);
}

function budgetOutcome(status: ThreadStatus): BudgetOutcome {
  if (status === 'completed' || status === 'continued') return 'completed';
  return status === 'cancelled' ? 'cancelled' : 'error';
}

function clippedResult(text: string): { text: string; truncated: boolean } {
  if (text.length <= RESULT_MAX) return { text, truncated: false };
  return { text: `${clipText(text, RESULT_MAX)}\n\n[... truncated]`, truncated: true };
}

/** The caller's result: the loop's, its codes checked, with setup's warnings and attenuated grants. */
function threadResult(
  run: RunOutcome,
  status: ThreadStatus,
  resultText: string,
  truncated: boolean,
  error: string | undefined,
): ThreadResult {
  const { result, cost, prepared } = run;
  const { success: _s, status: _st, result: _r, outputs: _o, error: _e, ...rest } = result;
  const succeeded = result.success && status !== 'error';
  const { error_type: _t, limit_code: _l, error_code: _c, ...others } = rest;
  const attenuated = prepared.attenuated_capabilities ?? [];
  return {
    ...others,
    // Its codes checked: a hook's control result may have put anything under these names.
    ...(succeeded ? {} : failureCodes(result as LoopResult)),
    success: succeeded,
    status,
    thread_id: run.place.threadId,
    directive: run.place.directiveId,
    result: resultText,
    ...(result.outputs ? { outputs: result.outputs } : {}),
    cost,
    ...(error ? { error } : {}),
    ...(truncated ? { result_truncated: true } : {}),
    timing: run.timing,
    ...(prepared.warnings.length ? { warnings: prepared.warnings } : {}),
    ...(attenuated.length ? { attenuated_capabilities: attenuated } : {}),
  };
}

/**
 * Links a handoff's continuation in the registry before this thread's cancel marker goes, and
 * hands that marker on: a cancel of the chain's first id finds the continuation from now on, and
 * one that arrived while this thread was ending still stops the chain.
 */
async function handOnCancellation(
  place: RunPlace,
  continuationId: string,
  cancelMarker: string,
): Promise<void> {
  const { store, threadId } = place;
  await store.registry.setContinuation(threadId, continuationId);
  await store.registry.setChainInfo(
    continuationId,
    (await store.registry.getThread(threadId))?.chain_root_id ?? threadId,
    threadId,
  );
  if (existsSync(cancelMarker)) {
    writeFileSync(join(ensureThreadDir(place.stateRoot, continuationId), CANCEL_MARKER), `${nowIso()}\n`, {
      mode: 0o600,
    });
  }
}

/**
 * What a caller that waited for a thread gets when it handed off: the work's end, not its first
 * thread's `continued`. The last thread's status, result and outputs, the chain's summed cost, and
 * every thread id of the chain in order (`next` is already the result of its own chain).
 */
export function chainResult(first: ThreadResult, next: ThreadResult): ThreadResult {
  const rest = Array.isArray(next.chain_thread_ids)
    ? (next.chain_thread_ids as string[])
    : [String(next.thread_id)];
  const cost: ThreadCost = { ...ZERO_COST };
  for (const key of Object.keys(cost) as Array<keyof ThreadCost>) {
    cost[key] = Math.round(((first.cost[key] ?? 0) + (next.cost?.[key] ?? 0)) * 1e9) / 1e9;
  }
  return {
    ...next,
    // The id the caller started stays the result's id; the chain names the rest.
    thread_id: first.thread_id,
    final_thread_id: rest.at(-1),
    cost,
    chain_thread_ids: [String(first.thread_id), ...rest],
    ...(first.warnings ? { warnings: first.warnings } : {}),
  };
}
