/**
 * `wait_threads` (spec threads §10.5): wait until every named thread has finished — in any
 * process — or the timeout passes, and report each one's outcome from the registry.
 *
 * Threads finish in other processes (every fork is its own, §11), so the only shared signal is
 * the store. The wait asks it to be woken at the next registry change (`waitForChange`: on
 * SQLite a watch on the state folder, which sees another process's commit) and re-reads the
 * registry ~10 ms later (events come in bursts; one read serves a burst). The wake-up is asked
 * for before each read, so a commit made while reading still wakes the next round. Notifications
 * can be lost (network mounts, some containers), so the registry is also polled every `pollMs`
 * (default 500, the spec's poll fallback).
 *
 * Outcomes are chain-resolved like `aggregateResults`: a thread that handed off (`continued`) is
 * waited for until the end of its continuation chain finishes. An id not in the registry may be
 * registered later (a spawn still starting): it is waited for too, and reported `not_found` only
 * when the timeout passes. Every watcher and timer is released on every way out (all finished,
 * timeout, abort, error): a resolved wait never keeps the process alive.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isRyeError, RyeError } from '@ryeos/lillux';
import type { ThreadRegistry, ThreadStore } from '../store/index.js';
import { openStoreForQuery, type StoreChoice } from '../store/opener.js';
import { checkProjectPath, checkThreadIds, resolveThread, type ThreadOutcome } from './query.js';

/** Default `timeout` (coordination.yaml `wait_threads.timeout`), in seconds. */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 600;
/** Longer timeouts are cut to this (spec §10.5). */
export const MAX_WAIT_TIMEOUT_SECONDS = 3600;
/** The poll fallback's period (spec §10.5: "else poll 500 ms"). */
export const DEFAULT_POLL_MS = 500;
/** Delay from a file event to the registry read: a commit writes in bursts. */
export const WATCH_DEBOUNCE_MS = 10;
const MIN_POLL_MS = 10;
/**
 * How long a thread whose status is final but whose result is not written yet is waited for:
 * the runner commits the status, then the result, a moment apart. After this it is reported
 * without outputs and cost.
 */
export const RESULT_GRACE_MS = 1000;

export interface WaitThreadsOptions extends StoreChoice {
  /** Seconds (default 600; more than 3600 is cut to 3600; 0 checks once). */
  timeoutSeconds?: number;
  /** Aborting rejects the wait with the signal's reason. */
  signal?: AbortSignal;
  /** The poll fallback's period in milliseconds (default 500). */
  pollMs?: number;
}

export interface WaitThreadsResult {
  /** Every thread completed (`completed`, after chain resolution). */
  success: boolean;
  results: Record<string, ThreadOutcome>;
}

type ThreadProgressStatus = NonNullable<ThreadOutcome['last_status']>;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The wait was aborted', 'AbortError');
}

/** The store was locked past its timeout (another process recovering it, say): read again next round. */
function isTransient(error: unknown): boolean {
  return isRyeError(error) && error.code === 'UNAVAILABLE';
}

/**
 * Waits until every thread in `threadIds` is final (`completed`, `error`, `cancelled`, or the end
 * of its continuation chain is), or `timeoutSeconds` pass. Unfinished threads are then reported
 * `timeout` (with `last_status`), ids the registry never had `not_found`. Throws (VALIDATION)
 * only for invalid arguments; rejects with the signal's reason when aborted.
 */
export async function waitThreads(
  projectPath: string,
  threadIds: string[],
  options: WaitThreadsOptions = {},
): Promise<WaitThreadsResult> {
  checkProjectPath(projectPath);
  const ids = checkThreadIds(threadIds);
  const { timeoutSeconds = DEFAULT_WAIT_TIMEOUT_SECONDS, pollMs = DEFAULT_POLL_MS, signal } = options;
  if (typeof timeoutSeconds !== 'number' || !Number.isFinite(timeoutSeconds) || timeoutSeconds < 0) {
    throw new RyeError(
      'VALIDATION',
      `timeout must be a non-negative number of seconds, not ${String(timeoutSeconds)}`,
      {
        hint: `The default is ${DEFAULT_WAIT_TIMEOUT_SECONDS}; at most ${MAX_WAIT_TIMEOUT_SECONDS}.`,
      },
    );
  }
  if (typeof pollMs !== 'number' || !Number.isFinite(pollMs) || pollMs <= 0) {
    throw new RyeError(
      'VALIDATION',
      `poll interval must be a positive number of milliseconds, not ${String(pollMs)}`,
      {
        hint: `The default is ${DEFAULT_POLL_MS}.`,
      },
    );
  }
  if (signal?.aborted) throw abortReason(signal);
  const timeoutMs = Math.min(timeoutSeconds, MAX_WAIT_TIMEOUT_SECONDS) * 1000;
  const deadline = Date.now() + timeoutMs;
  const reader = new OutcomeReader(ids);
  const aborted = signal ? abortedPromise(signal) : undefined;
  let store: ThreadStore | undefined;
  try {
    for (;;) {
      // A project where no thread ran yet has no registry: wait for it (polling), never create it.
      store ??= await openStoreForQuery(projectPath, options.store);
      const round = new AbortController();
      try {
        const changed = store?.waitForChange(round.signal).then(() => sleep(WATCH_DEBOUNCE_MS));
        changed?.catch(() => undefined); // ended with the round: never an unhandled rejection
        const final = Date.now() >= deadline;
        const read = await reader.read(store?.registry, final).catch((error: unknown) => {
          if (!final && isTransient(error)) return undefined; // the next round reads again
          throw error;
        });
        if (read?.done) return read.result;
        const wakeIn = Math.min(
          Math.max(MIN_POLL_MS, pollMs),
          deadline - Date.now(),
          read?.graceLeft ?? Infinity,
        );
        await Promise.race([
          ...(changed ? [changed] : []),
          sleep(Math.max(0, wakeIn), undefined, { signal: round.signal }),
          ...(aborted ? [aborted.promise] : []),
        ]);
      } finally {
        round.abort(); // the round's watch and timer go with it
      }
    }
  } finally {
    aborted?.dispose();
    await store?.close().catch(() => undefined);
  }
}

/** A promise that rejects with the signal's reason when it aborts; `dispose` drops the listener. */
function abortedPromise(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  let onAbort: () => void = () => undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** Reads every waited-for thread's outcome, tracking how long each has been final without its result. */
class OutcomeReader {
  // When each thread was first seen final without its result (see RESULT_GRACE_MS).
  readonly #unrecordedSince = new Map<string, number>();
  readonly #ids: string[];

  constructor(ids: string[]) {
    this.#ids = ids;
  }

  /**
   * `done` with the result when every thread finished, or `final` (the deadline) says to report
   * now: unfinished threads as `timeout`; otherwise how soon a grace period ends.
   */
  async read(
    registry: ThreadRegistry | undefined,
    final: boolean,
  ): Promise<{ done: true; result: WaitThreadsResult } | { done: false; graceLeft: number }> {
    const now = Date.now();
    let graceLeft = Number.POSITIVE_INFINITY;
    const read = [];
    for (const id of this.#ids) {
      const { outcome, progress } = await resolveThread(registry, id);
      let finished = progress === 'final';
      if (progress === 'unrecorded') {
        const since = this.#unrecordedSince.get(id) ?? now;
        this.#unrecordedSince.set(id, since);
        finished = now - since >= RESULT_GRACE_MS;
        if (!finished) graceLeft = Math.min(graceLeft, since + RESULT_GRACE_MS - now);
      } else this.#unrecordedSince.delete(id);
      read.push({ outcome, progress, finished });
    }
    if (!final && !read.every((r) => r.finished)) return { done: false, graceLeft };
    const outcomes = read.map(({ outcome, progress, finished }) =>
      finished || outcome.status === 'not_found' || progress === 'unrecorded'
        ? outcome // final status, result still missing: report what there is
        : { ...outcome, status: 'timeout' as const, last_status: outcome.status as ThreadProgressStatus },
    );
    const results = Object.fromEntries(this.#ids.map((id, i) => [id, outcomes[i]!]));
    return {
      done: true,
      result: { success: outcomes.every((outcome) => outcome.status === 'completed'), results },
    };
  }
}
