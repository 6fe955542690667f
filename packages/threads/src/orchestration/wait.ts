/**
 * `wait_threads` (spec threads §10.5): wait until every named thread has finished — in any
 * process — or the timeout passes, and report each one's outcome from the registry.
 *
 * Threads finish in other processes (every fork is its own, §11), so the only shared signal is
 * registry.db. The wait watches the state root folder (`fs.watch` on `.ai/state/threads/`): a
 * commit by another process writes `registry.db-wal` (or `registry.db`), which the watch reports,
 * and the registry is re-read ~10 ms later (events come in bursts; one read serves a burst). A
 * second read follows the last event of a burst, in case an event arrived before the commit was
 * visible. `fs.watch` is unreliable on some file systems (network mounts, some containers), so
 * the registry is also polled every `pollMs` (default 500, the spec's poll fallback).
 *
 * Outcomes are chain-resolved like `aggregateResults`: a thread that handed off (`continued`) is
 * waited for until the end of its continuation chain finishes. An id not in the registry may be
 * registered later (a spawn still starting): it is waited for too, and reported `not_found` only
 * when the timeout passes. Every watcher and timer is released on every way out (all finished,
 * timeout, abort, error): a resolved wait never keeps the process alive.
 */
import { existsSync, type FSWatcher, watch } from 'node:fs';
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { threadsStateRoot } from '../persistence/paths.js';
import { openThreadStore, REGISTRY_DB, type ThreadStore } from '../store/index.js';
import { checkProjectPath, checkThreadIds, resolveThread, type ThreadOutcome } from './query.js';

/** Default `timeout` (coordination.yaml `wait_threads.timeout`), in seconds. */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 600;
/** Longer timeouts are cut to this (spec §10.5). */
export const MAX_WAIT_TIMEOUT_SECONDS = 3600;
/** The poll fallback's period (spec §10.5: "else poll 500 ms"). */
export const DEFAULT_POLL_MS = 500;
/** Delay from a file event to the registry read: a commit writes in bursts. */
export const WATCH_DEBOUNCE_MS = 10;
/** A second read this long after the last event of a burst. */
const WATCH_SETTLE_MS = 100;
const MIN_POLL_MS = 10;
/**
 * How long a thread whose status is final but whose result is not written yet is waited for:
 * the runner commits the status, then the result, a moment apart. After this it is reported
 * without outputs and cost.
 */
export const RESULT_GRACE_MS = 1000;

export interface WaitThreadsOptions {
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

/** SQLite busy on a read (another process recovering the WAL, say): try again at the next check. */
function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
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
  const root = threadsStateRoot(projectPath);
  const registryPath = join(root, REGISTRY_DB);

  return new Promise<WaitThreadsResult>((resolve, reject) => {
    let settled = false;
    let store: ThreadStore | undefined;
    let watcher: FSWatcher | undefined;
    let watchFailed = false;
    let soon: NodeJS.Timeout | undefined;
    let settle: NodeJS.Timeout | undefined;
    let poll: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    // When each thread was first seen final without its result (see RESULT_GRACE_MS).
    const unrecordedSince = new Map<string, number>();

    const release = () => {
      settled = true;
      clearTimeout(soon);
      clearTimeout(settle);
      clearInterval(poll);
      clearTimeout(deadline);
      clearTimeout(grace);
      signal?.removeEventListener('abort', onAbort);
      try {
        watcher?.close();
      } catch {
        // already closed
      }
      watcher = undefined;
      try {
        store?.close();
      } catch {
        // nothing left to release
      }
      store = undefined;
    };

    const fail = (error: unknown) => {
      if (settled) return;
      release();
      reject(error);
    };

    function onAbort() {
      fail(abortReason(signal!));
    }

    const onEvent = (_event: string, filename: string | Buffer | null) => {
      // Only the registry's files matter (thread folders and the ledger change too).
      if (filename !== null && !String(filename).startsWith(REGISTRY_DB)) return;
      soon ??= setTimeout(() => {
        soon = undefined;
        check(false);
      }, WATCH_DEBOUNCE_MS);
      clearTimeout(settle);
      settle = setTimeout(() => check(false), WATCH_SETTLE_MS);
    };

    const startWatcher = () => {
      if (watcher || watchFailed || !existsSync(root)) return;
      try {
        // Not persistent: the poll timer keeps the process alive while waiting, nothing after.
        watcher = watch(root, { persistent: false }, onEvent);
        watcher.on('error', () => {
          // The watch broke (folder removed, inotify gone): the poll carries on alone.
          try {
            watcher?.close();
          } catch {
            // already closed
          }
          watcher = undefined;
          watchFailed = true;
        });
      } catch {
        watchFailed = true; // e.g. ENOSPC (inotify watch limit): poll only
      }
    };

    function check(final: boolean): void {
      if (settled) return;
      let outcomes: ThreadOutcome[];
      let done: boolean;
      try {
        startWatcher();
        // A project where no thread ran yet has no registry: wait for it, never create it.
        if (!store && existsSync(registryPath)) store = openThreadStore(root);
        const registry = store?.registry;
        const now = Date.now();
        let graceLeft = Number.POSITIVE_INFINITY;
        const read = ids.map((id) => {
          const { outcome, progress } = resolveThread(registry, id);
          let finished = progress === 'final';
          if (progress === 'unrecorded') {
            const since = unrecordedSince.get(id) ?? now;
            unrecordedSince.set(id, since);
            finished = now - since >= RESULT_GRACE_MS;
            if (!finished) graceLeft = Math.min(graceLeft, since + RESULT_GRACE_MS - now);
          } else unrecordedSince.delete(id);
          return { outcome, progress, finished };
        });
        done = read.every((r) => r.finished);
        outcomes = read.map(({ outcome, progress, finished }) =>
          finished || !final || outcome.status === 'not_found'
            ? outcome
            : progress === 'unrecorded'
              ? outcome // final status, result still missing: report what there is
              : { ...outcome, status: 'timeout', last_status: outcome.status as ThreadProgressStatus },
        );
        if (!done && !final && graceLeft !== Number.POSITIVE_INFINITY) {
          clearTimeout(grace);
          grace = setTimeout(() => check(false), graceLeft);
        }
      } catch (error) {
        if (!final && isTransient(error)) return; // the next event or poll reads again
        fail(error);
        return;
      }
      if (!done && !final) return;
      release();
      const results = Object.fromEntries(ids.map((id, i) => [id, outcomes[i]!]));
      resolve({ success: outcomes.every((outcome) => outcome.status === 'completed'), results });
    }

    check(timeoutMs === 0);
    if (settled) return;
    signal?.addEventListener('abort', onAbort, { once: true });
    poll = setInterval(() => check(false), Math.max(MIN_POLL_MS, pollMs));
    deadline = setTimeout(() => check(true), timeoutMs);
  });
}
