/**
 * A managed thread is one lifecycle in three phases, whatever starts it:
 *
 *   prepare  (lifecycle/prepare.ts, in the caller)  → a `PreparedThread`, or a refusal that wrote nothing
 *   run      (lifecycle/run.ts, where the job lands) → the turn loop over the transcript
 *   finalize (lifecycle/finalize.ts)                 → spend settled, records sealed, status last
 *
 * A sync fork runs all three here; an async fork hands the prepared thread to a detached process
 * (`runPreparedThread` there); a child is a fork under a parent; a continuation and a resume are
 * forks that carry a previous thread's conversation. Every failure is recorded and returned,
 * never thrown.
 */
import { toRyeError } from '@ryeos/lillux';
import type { ThreadHost } from './host.js';
import { withThreadsHost } from './layer-bundle.js';
import { chainResult, finalizeThread } from './lifecycle/finalize.js';
import { handBackThread } from './lifecycle/hand-back.js';
import { declaredParent, liveParent } from './lifecycle/parent.js';
import { prepareThread } from './lifecycle/prepare.js';
import { Registration, Reservation, releaseReservation } from './lifecycle/register.js';
import { type RunRequest, runPhase, runSpans } from './lifecycle/run.js';
import type { RunLease } from './lifecycle/run-lease.js';
import { claimRun, type RunClaim } from './lifecycle/run-resume.js';
import type { RunPlace, ThreadPlace } from './lifecycle/run-types.js';
import { fail, failedThread, SetupFailure } from './lifecycle/setup-failure.js';
import { type ResumeRequest, type ResumeResult, resumeWith } from './orchestration/resume.js';
import { threadsStateRoot } from './persistence/paths.js';
import { loadSigner, type Signer } from './persistence/signer.js';
import type { PreparedThread } from './prepared.js';
import { HANDED_BACK, TAKEN_OVER } from './runner/turn-limits.js';
import { openProjectStore, openStoreForRun, type StoreChoice } from './store/opener.js';
import { type ThreadCost, type ThreadStore, ZERO_COST } from './store/types.js';
import type { ForkRequest, ThreadResult } from './thread-request.js';

export type { ForkRequest, ThreadResult } from './thread-request.js';

/** Runs a directive in a managed thread: prepared here, then run here or handed to a detached process. */
export async function runThread(host: ThreadHost, request: ForkRequest): Promise<ThreadResult> {
  const directiveId = request.directiveId.replace(/^directive:/, '');
  const stateRoot = threadsStateRoot(host.projectPath);
  let store: ThreadStore | undefined;
  let registration: Registration | undefined;
  try {
    host = await withThreadsHost(host);
    // Keys first: a fork without a keypair fails before anything is registered.
    const signer = await hostSigner(host).catch((error) => {
      throw new SetupFailure(toRyeError(error));
    });
    const declared = await declaredParent(host, request, stateRoot);
    store = await openProjectStore(host.projectPath, host.store);
    const parent = await liveParent(declared, request, store);
    const place: ThreadPlace = { store, signer, parent, directiveId, stateRoot };
    registration = new Registration(store, directiveId, parent?.threadId, stateRoot, request.registeredId);
    const prepared = await prepareThread(host, request, place, registration);
    const registered: RunPlace = { ...place, threadId: prepared.thread_id };
    if (request.detach) return await handToDetachedRunner(request.detach, registered, prepared);
    request.onPrepared?.(prepared);
    return await runAndFinalize(host, request, registered, prepared);
  } catch (error) {
    return await failedThread(error, store, registration?.threadId ?? request.registeredId, directiveId);
  } finally {
    // Never throws: a store that fails to close leaves the result as it is.
    await store?.close().catch(() => undefined);
  }
}

/**
 * Run and finalize, in this process. From here the thread settles its budget however it ends;
 * a thread that filled its context window hands off to its continuation, which runs next.
 */
async function runAndFinalize(
  host: ThreadHost,
  request: RunRequest,
  place: RunPlace,
  prepared: PreparedThread,
): Promise<ThreadResult> {
  const reservation = new Reservation(place.store, place.threadId);
  const spans = await runSpans(place, prepared, request.traceParent);
  try {
    const run = await runPhase({ host, request, place, prepared, runThread, ...(spans ? { spans } : {}) });
    // Settled only by the run that still holds the thread: a stalled one records nothing.
    if (run.result.taken_over || (place.lease && !(await place.lease.holds()))) {
      spans?.end(run.result, run.cost);
      return takenOver(place.lease!, place.threadId, place.directiveId, run.cost);
    }
    if (run.result.handed_back) {
      spans?.end(run.result, run.cost);
      return await handBackThread(run);
    }
    // What finalizing runs (its hooks' tools) is part of the thread's trace too.
    const ended = spans
      ? await spans.within(() => finalizeThread(run, reservation))
      : await finalizeThread(run, reservation);
    spans?.end(run.result, run.cost);
    if (ended.status !== 'continued' || !run.handoffTo) return ended;
    const next = await runThread(run.host, {
      directiveId: place.directiveId,
      ...(request.model ? { model: request.model } : {}),
      ...(request.limitOverrides ? { limitOverrides: request.limitOverrides } : {}),
      ...(place.parent ? { parentThreadId: place.parent.threadId } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      previousThreadId: place.threadId,
      registeredId: run.handoffTo,
      handoff: true,
    });
    return chainResult(ended, next);
  } catch (error) {
    spans?.end({ success: false, error_type: 'internal' });
    await reservation.release('error');
    throw error;
  }
}

/** The async hand-off: the detached process runs and finalizes the thread from here on. */
async function handToDetachedRunner(
  detach: NonNullable<ForkRequest['detach']>,
  place: RunPlace,
  prepared: PreparedThread,
): Promise<ThreadResult> {
  const { store, threadId } = place;
  let pid: number;
  try {
    pid = await detach(threadId, prepared, (started) => store.registry.updatePid(threadId, started));
  } catch (error) {
    await store.ledger.release(threadId, 'error');
    fail('SPAWN', toRyeError(error).message);
  }
  return {
    success: true,
    status: 'running',
    thread_id: threadId,
    directive: place.directiveId,
    cost: { ...ZERO_COST },
    pid,
    async: true,
  };
}

/**
 * The detached process's half of `async: true`: run and finalize a thread its caller prepared,
 * from the `PreparedThread` it was handed (checked where it arrived by `parsePreparedThread`).
 * Never throws.
 */
export async function runPreparedThread(
  host: ThreadHost,
  prepared: PreparedThread,
  options: {
    threadId: string;
    signal?: AbortSignal;
    /**
     * Run from a job queue that locks the job to one worker: the thread is taken over whichever
     * process or worker its row names (a killed worker's job runs again on another).
     */
    queued?: boolean;
    /** The W3C `traceparent` of the call that set the thread up: its spans continue that trace. */
    traceParent?: string;
    /**
     * Once aborted, the run stops before its next turn and leaves the thread running, unfinalized,
     * for another process to take up (`handed_back` in the result): a worker's graceful stop.
     */
    handBack?: AbortSignal;
  },
): Promise<ThreadResult> {
  const { threadId } = options;
  const directiveId = prepared.directive_id;
  let store: ThreadStore | undefined;
  let claim: RunClaim | undefined;
  try {
    host = await withThreadsHost(host);
    store = await openStoreForRun(host.projectPath, host.store);
    claim = await claimRun(store, threadId, undefined, options.queued === true);
    if (prepared.thread_id !== threadId) {
      fail('VALIDATION', `The thread setup handed to the runner is not that of thread '${threadId}'`);
    }
    const parentId = prepared.record.parent_thread_id;
    const place: RunPlace = {
      store,
      threadId,
      signer: await hostSigner(host),
      parent: typeof parentId === 'string' ? { threadId: parentId, limits: {}, capabilities: [] } : undefined,
      directiveId,
      stateRoot: threadsStateRoot(host.projectPath),
      ...(claim.lease ? { lease: claim.lease } : {}),
    };
    const request: RunRequest = {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.traceParent ? { traceParent: options.traceParent } : {}),
      ...(options.handBack ? { handBack: options.handBack } : {}),
      ...(prepared.request.model ? { model: prepared.request.model } : {}),
      ...(prepared.request.limit_overrides ? { limitOverrides: prepared.request.limit_overrides } : {}),
    };
    return await runAndFinalize(host, request, place, prepared);
  } catch (error) {
    // Another run holds the thread now: its row and budget are that run's to record.
    if (claim?.lease?.lost) return takenOver(claim.lease, threadId, directiveId);
    // The thread will not run: its reservation goes back and its row says why. A row that is not
    // running (cancelled or killed before this process got going) keeps its status.
    if (store && claim) await releaseReservation(store, threadId);
    return await failedThread(error, store, claim ? threadId : undefined, directiveId);
  } finally {
    claim?.release();
    await store?.close().catch(() => undefined);
  }
}

/**
 * A run that lost its thread to another: nothing of it is recorded. One that could not ask (the
 * store unreachable) stopped the same way, but hands the thread back, as a stopping worker does.
 */
function takenOver(
  lease: RunLease,
  threadId: string,
  directiveId: string,
  cost: ThreadCost = { ...ZERO_COST },
): ThreadResult {
  if (lease.unconfirmed) {
    return {
      success: false,
      status: 'running',
      handed_back: true,
      thread_id: threadId,
      directive: directiveId,
      cost,
      error: HANDED_BACK,
    };
  }
  return {
    success: false,
    status: 'running',
    taken_over: true,
    thread_id: threadId,
    directive: directiveId,
    cost,
    error: TAKEN_OVER,
  };
}

/**
 * `resume_thread`: a finished thread carries on with a new message in a new thread of its chain
 * (orchestration/resume.ts), run by this runner.
 */
export function resumeThread(host: ThreadHost, request: ResumeRequest): Promise<ResumeResult> {
  return resumeWith(runThread, host, request);
}

/**
 * A detached thread whose runner failed before it could run it (its request or its facade did
 * not come together): if it is still `running`, its reservation goes back and it is marked
 * `error` with `message`. Answers whether it was. Never throws.
 */
export async function abandonThread(
  projectPath: string,
  threadId: string,
  message: string,
  options: StoreChoice = {},
): Promise<boolean> {
  let store: ThreadStore | undefined;
  try {
    store = await openProjectStore(projectPath, options.store);
    if ((await store.registry.getThread(threadId))?.status !== 'running') return false;
    await releaseReservation(store, threadId);
    await store.registry.setResult(threadId, { error: message, cost: ZERO_COST });
    await store.registry.updateStatus(threadId, 'error');
    return true;
  } catch {
    return false;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

/** The host's own signer, or the key in its settings' key folder (a missing key fails, never made here). */
function hostSigner(host: ThreadHost): Promise<Signer> {
  return host.signer ? Promise.resolve(host.signer) : loadSigner(host.settings.signingKeyDir);
}
