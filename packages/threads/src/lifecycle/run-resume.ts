/**
 * The run phase taking up a thread whose earlier process died mid-run: who may take it up
 * (`claimRun`), where it stands (`readRunResume`, from its own transcript), and what the new run
 * records before its loop goes on (`recordRunResume`).
 *
 * Hooks: a resumed run does not run `build_system_prompt` or `thread_started` again; their output
 * is in the recorded system prompt and opening message, and running them twice would inject their
 * context twice and repeat their side effects. The hooks of the rest of the run (`after_step`,
 * `error`, `limit`, `after_complete`) run as they would have.
 */
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { ThreadHost } from '../host.js';
import { withPrompt } from '../orchestration/continuation.js';
import { TRANSCRIPT_JSONL } from '../persistence/transcript.js';
import type { PreparedThread } from '../prepared.js';
import type { ChatMessage } from '../provider/types.js';
import type { ThreadLog } from '../runner/loop.js';
import { INTERRUPTED_CALL_RESULT, type ResumePoint, readResumePoint } from '../runner/resume-point.js';
import { isProcessAlive } from '../store/index.js';
import type { BudgetStatus, ThreadRow, ThreadStore } from '../store/types.js';
import type { Opening } from './opening.js';
import { RunLease } from './run-lease.js';
import type { RunPlace } from './run-types.js';

/** Threads a run of this process holds: the registry's pid cannot tell two runs of one process apart. */
const runningHere = new Set<string>();

/** This process's hold on a thread it runs; released when the run ends. */
export interface RunClaim {
  release(): void;
  /** A queued run's fencing token, when its store gives one. */
  lease?: RunLease;
}

/**
 * Takes the thread up for this process: its row must be `running` with its budget unsettled, and
 * held by this process or by one that is gone (a killed runner), and no other run of this process
 * may hold it. A thread another run is running is never run twice.
 */
export async function claimRun(
  store: ThreadStore,
  threadId: string,
  isAlive: (pid: number) => boolean = isProcessAlive,
  queued = false,
): Promise<RunClaim> {
  // Checked and taken before the first await, so two calls of one process cannot both pass.
  if (runningHere.has(threadId)) {
    throw new RyeError('UNAVAILABLE', `Thread '${threadId}' is already being run by this process`, {
      hint: 'Wait for that run to end (rye/agent/threads/orchestrator wait_threads), or cancel it first.',
    });
  }
  runningHere.add(threadId);
  const claim: RunClaim = { release: () => void runningHere.delete(threadId) };
  try {
    const epoch = await takeOver(store, threadId, isAlive, queued);
    if (epoch !== undefined) claim.lease = new RunLease(store, threadId, epoch);
    return claim;
  } catch (error) {
    claim.release();
    throw error;
  }
}

/** Answers the run's fencing token when the store gives one (a queued run). */
async function takeOver(
  store: ThreadStore,
  threadId: string,
  isAlive: (pid: number) => boolean,
  queued: boolean,
): Promise<number | undefined> {
  const row = await store.registry.getThread(threadId);
  if (row?.status !== 'running') {
    throw new RyeError(
      'NOT_FOUND',
      `Thread '${threadId}' is not a running thread its caller set up (${row ? `status ${row.status}` : 'no registry row'})`,
    );
  }
  const budget = await store.ledger.get(threadId);
  if (budget && budget.status !== 'active') {
    // Its end was being recorded when its process died: its spend is settled, so it cannot run on.
    // A queued thread's job ends here, so its row gets the end its ledger recorded, or none would.
    if (queued) await endAsSettled(store, threadId, budget.status, row.result);
    throw new RyeError(
      'NOT_FOUND',
      `Thread '${threadId}' cannot run: its budget was already settled (${budget.status})`,
    );
  }
  if (queued) {
    // The row now names this process and worker, whoever it named before; a worker that only
    // stalled and still runs it loses it at its next fencing check.
    if (store.registry.takeRun && store.registry.holdsRun) {
      const epoch = await store.registry.takeRun(threadId, process.pid);
      if (epoch === undefined) {
        throw new RyeError('NOT_FOUND', `Thread '${threadId}' is no longer running; its job is not run`);
      }
      return epoch;
    }
    await store.registry.updatePid(threadId, process.pid);
    return undefined;
  }
  if (row.pid !== null && row.pid !== process.pid && isAlive(row.pid)) {
    throw new RyeError('UNAVAILABLE', `Thread '${threadId}' is already being run by process ${row.pid}`, {
      hint: 'Wait for that run to end (rye/agent/threads/orchestrator wait_threads), or cancel it first.',
    });
  }
  // Compare-and-set: of two processes that found the same dead runner, one takes the thread up.
  if (row.pid !== process.pid && !(await store.registry.claimPid(threadId, row.pid, process.pid))) {
    throw new RyeError('UNAVAILABLE', `Thread '${threadId}' was just taken up by another process`, {
      hint: 'Wait for that run to end (rye/agent/threads/orchestrator wait_threads), or cancel it first.',
    });
  }
  return undefined;
}

/**
 * The row of a thread whose process died after its spend was settled, before its status was: the
 * status its ledger ended with, and, when its result was not written either, why it has none.
 */
async function endAsSettled(
  store: ThreadStore,
  threadId: string,
  settled: Exclude<BudgetStatus, 'active'>,
  result: ThreadRow['result'],
): Promise<void> {
  const recorded = result !== null && typeof result === 'object' && Object.keys(result).length > 0;
  if (!recorded) {
    await store.registry.setResult(threadId, {
      error:
        'The process running this thread stopped while it recorded the thread’s end; its result was not recorded.',
    });
  }
  await store.registry.updateStatus(threadId, recorded ? settled : 'error');
}

/** Where the thread's run stands, from its transcript; undefined for a run that has not begun. */
export function readRunResume(
  host: ThreadHost,
  dir: string,
  threadId: string,
  prepared: PreparedThread,
): Promise<ResumePoint | undefined> {
  return readResumePoint(join(dir, TRANSCRIPT_JSONL), {
    threadId,
    trust: host.executor.trust,
    ...(prepared.model.pricing ? { pricing: prepared.model.pricing } : {}),
  });
}

/** The conversation a resumed run goes on with, once `recordRunResume` has noted it. */
export async function resumedOpening(
  point: ResumePoint,
  prepared: PreparedThread,
  log: Pick<ThreadLog, 'emit'>,
  place: RunPlace,
): Promise<Opening> {
  await recordRunResume(point, log, place.store, place.threadId);
  return {
    system: point.system,
    messages: resumedMessages(point, prepared),
    resumedFrom: { cost: point.cost },
  };
}

/**
 * The conversation a resumed run sends: its transcript's, behind the conversation a continuation
 * carried (which its transcript never held: only its opening prompt was recorded), joined to
 * that prompt exactly as the first run joined them.
 */
export function resumedMessages(
  point: Pick<ResumePoint, 'messages'>,
  prepared: PreparedThread,
): ChatMessage[] {
  const [opening, ...rest] = point.messages;
  const carried = prepared.carried;
  if (!carried || opening?.role !== 'user') return point.messages;
  return [...withPrompt(structuredClone(carried.messages), opening.content), ...rest];
}

/**
 * Records the resume, answers each interrupted call in the transcript (so a later resume or a
 * replay reads what the model was told), and sets the ledger's own spend to what the transcript
 * says was spent: the killed process may have died before it counted its last response.
 */
export async function recordRunResume(
  point: ResumePoint,
  log: Pick<ThreadLog, 'emit'>,
  store: ThreadStore,
  threadId: string,
): Promise<void> {
  log.emit('thread_resumed_run', {
    after_turn: point.lastTurn,
    cost: point.cost,
    interrupted_calls: point.interrupted.map((call) => call.id),
  });
  for (const call of point.interrupted) {
    log.emit('tool_call_result', {
      call_id: call.id,
      output: INTERRUPTED_CALL_RESULT,
      error: INTERRUPTED_CALL_RESULT,
      interrupted: true,
      turn: point.lastTurn,
    });
  }
  await store.ledger.reportActual(threadId, point.cost.spend);
  await store.registry.updateCostSnapshot(threadId, point.cost).catch(() => false);
}
