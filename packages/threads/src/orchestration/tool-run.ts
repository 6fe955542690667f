/**
 * An async tool run a thread starts (`rye_execute {async: true}` on a tool) is that thread's
 * child: it takes one of the thread's `spawns`, may not start once the thread has ended, is
 * bounded by the thread's remaining duration, and stops when the thread is cancelled, killed or
 * fails. Otherwise a model could start any number of detached processes that outlive it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { verifyThreadRecords } from '../inspect.js';
import { threadDir, threadsStateRoot } from '../persistence/paths.js';
import type { Trust } from '../persistence/signer.js';
import { asRecord } from '../records.js';
import { isProcessAlive, openThreadStore } from '../store/index.js';
import { openProjectStore, type ThreadStoreOpener } from '../store/opener.js';
import { TERMINAL_STATUSES, type ThreadStore } from '../store/types.js';
import { CANCEL_MARKER } from './control.js';

/** Spawns a thread has when neither it nor the defaults say (resilience.yaml `limits.defaults.spawns`). */
const DEFAULT_SPAWNS = 50;
/** How often a tool run looks at its cancel marker and its thread's status. */
const WATCH_MS = 200;

export interface ToolRunAdmission {
  /** Epoch ms at which the parent thread's duration limit ends: the run is stopped then. */
  deadline: number;
  /** The parent's limits, as its signed record states them. */
  parentLimits: Record<string, unknown>;
}

/**
 * Admits an async tool run as a child of `parentThreadId`: the parent's signed record verifies,
 * it is still running, its duration has time left, and it has a spawn left (taken here).
 */
export async function admitToolRun(options: {
  store: ThreadStore;
  projectPath: string;
  parentThreadId: string;
  trust: Trust;
}): Promise<ToolRunAdmission> {
  const { store, parentThreadId } = options;
  const status = (await store.registry.getThread(parentThreadId))?.status;
  if (!status || TERMINAL_STATUSES.includes(status)) {
    throw new RyeError(
      'VALIDATION',
      `Thread ${parentThreadId} is not running (${status ?? 'not registered'}): it cannot start async tool runs`,
      { hint: 'Start the tool from a running thread, or without async.' },
    );
  }
  const dir = threadDir(threadsStateRoot(options.projectPath), parentThreadId);
  const records = await verifyThreadRecords(dir, parentThreadId, options.trust, { transcript: 'lenient' });
  if (!records.valid || !records.data) {
    throw new RyeError('INTEGRITY', `Thread ${parentThreadId} has records that do not verify`, {
      hint: 'A thread record edited after signing cannot grant spawns or time.',
    });
  }
  const limits = asRecord(records.data.limits);
  const duration = Number(limits.duration_seconds);
  const started = Date.parse(records.data.created_at);
  const deadline =
    Number.isFinite(duration) && Number.isFinite(started) ? started + duration * 1000 : Infinity;
  if (deadline <= Date.now()) {
    throw new RyeError('LIMIT', `Thread ${parentThreadId} has no time left for an async tool run`, {
      hint: 'Run the tool without async, or raise the thread’s duration_seconds.',
    });
  }
  const max = Number(limits.spawns ?? DEFAULT_SPAWNS);
  if (
    !(await store.registry.tryIncrementSpawn(parentThreadId, Number.isFinite(max) ? max : DEFAULT_SPAWNS))
  ) {
    const count = (await store.registry.getThread(parentThreadId))?.spawn_count ?? max;
    throw new RyeError('LIMIT', `Spawn limit exceeded for parent ${parentThreadId}: ${count}/${max}`, {
      hint: 'Async tool runs count against the thread’s spawns: wait for the ones running, or run the tool without async.',
    });
  }
  return { deadline, parentLimits: limits };
}

/** Ancestors looked at before the walk gives up (a loop of hand-edited parent links, say). */
const MAX_LINE = 256;

/**
 * Why a run under `parentThreadId` must stop, or undefined while its line lives: a thread of the
 * line (the parent, then each ancestor) that ended in error or was cancelled, or that is still
 * `running` though its process is gone (its host crashed). A thread that handed off or was resumed
 * (`continued`) lives on in its chain's current end, which is the one looked at.
 */
async function endedLine(store: ThreadStore, parentThreadId: string): Promise<string | undefined> {
  const seen = new Set<string>();
  for (let id: string | null = parentThreadId; id && !seen.has(id) && seen.size < MAX_LINE; ) {
    seen.add(id);
    const row = (await store.registry.getChain(id)).at(-1);
    if (!row) return undefined;
    if (row.status === 'error' || row.status === 'cancelled')
      return `thread ${row.thread_id} ended (${row.status})`;
    if (
      (row.status === 'running' || row.status === 'created') &&
      row.pid !== null &&
      !isProcessAlive(row.pid)
    ) {
      // Marked stale with their budget released, as opening the store would have done. The store
      // decides: a shared store's thread may run on another machine, alive by its heartbeat.
      const marked = await store.markStale(isProcessAlive);
      if (marked.includes(row.thread_id))
        return `the process of thread ${row.thread_id} (pid ${row.pid}) is gone`;
    }
    id = row.parent_id;
  }
  return undefined;
}

/**
 * Watches a running async tool run for the reasons it must stop: its cancel marker (its thread or
 * an ancestor was cancelled), its thread's line ending (see `endedLine`), its deadline.
 * Calls `stop` once with the reason; the answer disposes of the watch.
 */
export function watchToolRun(options: {
  projectPath: string;
  threadId: string;
  parentThreadId?: string;
  deadline?: number;
  stop(reason: string): void;
  /** Opens the project's thread store; default SQLite (opened at once, as before). */
  store?: ThreadStoreOpener;
}): () => void {
  const stateRoot = threadsStateRoot(options.projectPath);
  const marker = join(threadDir(stateRoot, options.threadId), CANCEL_MARKER);
  let store = options.parentThreadId && !options.store ? openThreadStore(stateRoot) : undefined;
  let done = false;
  if (options.parentThreadId && options.store) {
    // Until an opener's store arrives the poll checks the marker alone; a late one is closed at once.
    openProjectStore(options.projectPath, options.store).then(
      (opened) => {
        if (done) opened.close().catch(() => undefined);
        else store = opened;
      },
      () => undefined,
    );
  }
  const end = (reason: string) => {
    if (done) return;
    dispose();
    options.stop(reason);
  };
  // One registry walk at a time: a slow store never stacks up checks behind the poll.
  let walking = false;
  const check = () => {
    if (existsSync(marker)) return end('the tool run was cancelled');
    if (!options.parentThreadId || !store || walking) return;
    walking = true;
    endedLine(store, options.parentThreadId).then(
      (ended) => {
        walking = false;
        if (ended && !done) end(`its thread's line ended: ${ended}`);
      },
      () => {
        // A locked registry (or one closed by dispose meanwhile): the next poll reads again.
        walking = false;
      },
    );
  };
  const poll = setInterval(check, WATCH_MS);
  poll.unref();
  const timer =
    options.deadline !== undefined && Number.isFinite(options.deadline)
      ? setTimeout(
          () => end(`its thread's duration limit was reached`),
          Math.min(Math.max(0, options.deadline - Date.now()), 2_147_483_647),
        )
      : undefined;
  timer?.unref();
  function dispose() {
    if (done) return;
    done = true;
    clearInterval(poll);
    if (timer) clearTimeout(timer);
    store?.close().catch(() => undefined);
  }
  check();
  return dispose;
}
