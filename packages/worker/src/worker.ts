/**
 * One `rye worker`: a Graphile Worker pool of `concurrency` jobs at once, a heartbeat in the
 * store's `workers` table (under the worker's id and its pool's), and a reaper that hands the
 * jobs of pools whose heartbeat stopped (killed, machine gone) back to the queue within seconds,
 * through Graphile Worker's `forceUnlockWorkers`, instead of at its four-hour lock timeout.
 */
import { EventEmitter } from 'node:events';
import { RyeError } from '@ryeos/lillux';
import { openWorkerPresence, type WorkerPresence } from '@ryeos/store-postgres';
import type { Runner, WorkerEvents, WorkerUtils } from 'graphile-worker';
import { jobSpec, QUEUE_PREFIX, THREAD_TASK, type ThreadJob } from './jobs.js';
import { quietLogger } from './logger.js';

/** The most jobs one worker runs at once. */
const MAX_CONCURRENCY = 64;

export interface WorkerOptions {
  connectionString: string;
  workerId: string;
  /** Jobs run at once (1–64, default 1). */
  concurrency?: number;
  /**
   * Runs one job to its end; a throw fails the job (it is retried), so a handler records its own
   * failures. Once `stopping` is aborted (the worker stops), a handler may hand its job back at a
   * safe point instead (`requeue`): the job goes back on the queue at once for another worker.
   */
  handle(job: ThreadJob, context: JobContext): Promise<JobResult>;
  /** One line per job, and the reaper's hand-overs. */
  log?: (line: string) => void;
  /** How often this worker's heartbeat is written (default 1000 ms). */
  heartbeatMs?: number;
  /** Another worker silent this long is dead and its jobs are unlocked (default 3000 ms). */
  deadAfterMs?: number;
  /** How long a stop waits for the running jobs before it leaves them to the others (default 30000 ms). */
  stopGraceMs?: number;
}

export interface JobContext {
  /** Aborted when the worker starts to stop. */
  stopping: AbortSignal;
}

export interface JobResult {
  status: string;
  /** Put the job back on the queue (the handler stopped it at a safe point, for another worker). */
  requeue?: boolean;
}

export interface WorkerHandle {
  readonly workerId: string;
  /**
   * Takes no new job and tells the running ones (`JobContext.stopping`), which may hand
   * themselves back at a safe point (`requeue`); lets them end within the grace, then hands the
   * rest back to the queue at once (another worker resumes them from their transcripts) and
   * resolves without waiting for them: the process should then exit, so they stop as in a crash.
   */
  stop(): Promise<void>;
}

function checkWorkerOptions(options: WorkerOptions): number {
  const concurrency = options.concurrency ?? 1;
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_CONCURRENCY)) {
    throw new RyeError('VALIDATION', `Invalid concurrency ${concurrency}`, {
      hint: `Give --concurrency as a whole number from 1 to ${MAX_CONCURRENCY}.`,
    });
  }
  if (!/^[\w.:@-]{1,150}$/.test(options.workerId) || options.workerId.startsWith(QUEUE_PREFIX)) {
    throw new RyeError('VALIDATION', `Invalid worker id ${JSON.stringify(options.workerId.slice(0, 80))}`, {
      hint: `A worker id is 1–150 letters, digits, and . _ : @ - (for example the host name and a number), not starting with "${QUEUE_PREFIX}".`,
    });
  }
  return concurrency;
}

function describeJob(payload: unknown): ThreadJob {
  const job = payload as ThreadJob;
  if (
    !job ||
    typeof job !== 'object' ||
    typeof job.thread_id !== 'string' ||
    typeof job.project_path !== 'string'
  ) {
    throw new RyeError('VALIDATION', 'A queued job is not a thread job (thread_id and project_path)');
  }
  return job;
}

export async function startWorker(options: WorkerOptions): Promise<WorkerHandle> {
  const concurrency = checkWorkerOptions(options);
  const log = options.log ?? (() => {});
  const { makeWorkerUtils, run } = await import('graphile-worker');
  const logger = await quietLogger(log);
  const { connectionString, workerId } = options;
  const stopping = new AbortController();
  const presence: WorkerPresence = await openWorkerPresence({
    connectionString,
    workerId,
    heartbeatMs: options.heartbeatMs ?? 1000,
  });
  let utils: WorkerUtils | undefined;
  let runner: Runner | undefined;
  let poolId: string | undefined;
  try {
    utils = await makeWorkerUtils({ connectionString, logger });
    await utils.migrate();
    const events = new EventEmitter() as WorkerEvents;
    events.on('pool:create', ({ workerPool }) => {
      poolId = workerPool.id;
    });
    runner = await run({
      connectionString,
      concurrency,
      noHandleSignals: true,
      pollInterval: 500,
      gracefulShutdownAbortTimeout: options.stopGraceMs ?? 30_000,
      logger,
      events,
      taskList: {
        [THREAD_TASK]: async (payload: unknown) => {
          const job = describeJob(payload);
          const started = Date.now();
          const { status, requeue } = await options.handle(job, { stopping: stopping.signal });
          // Added again under its key while this one is locked: a new job another worker takes now.
          if (requeue) await utils!.addJob(THREAD_TASK, job, jobSpec(job));
          log(`${workerId} ${job.kind} ${job.thread_id} ${status} ${Date.now() - started}ms`);
        },
      },
    });
    if (!poolId) throw new RyeError('INTERNAL', 'The queue started no worker pool');
    await presence.alsoAs(`${QUEUE_PREFIX}${poolId}`);
  } catch (error) {
    await runner?.kill().catch(() => undefined);
    await Promise.resolve(utils?.release()).catch(() => undefined);
    await presence.close(true);
    throw error;
  }
  const reaper = startReaper(utils, presence, options.deadAfterMs ?? 3000, log);
  const ownPool = poolId;
  const started = runner;
  let stopped: Promise<void> | undefined;
  return {
    workerId,
    stop: () =>
      (stopped ??= (async () => {
        stopping.abort();
        clearInterval(reaper);
        const ended = await withinGrace(
          started.stop().catch(() => undefined),
          options.stopGraceMs ?? 30_000,
        );
        if (!ended) log(`${workerId} stop grace over: the jobs still running go back to the queue now`);
        // What did not end within the grace goes back to the queue now, not once this worker is seen dead.
        await utils.forceUnlockWorkers([ownPool]).catch(() => undefined);
        await Promise.resolve(utils.release()).catch(() => undefined);
        await presence.close(true);
      })()),
  };
}

/** Whether `ended` settled within `ms`: a hung tool call must not hold a stop for ever. */
async function withinGrace(ended: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([ended.then(() => true as const), graceOver]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every second: the jobs of pools silent for `deadAfterMs` are unlocked, so live pools pick them up. */
function startReaper(
  utils: WorkerUtils,
  presence: WorkerPresence,
  deadAfterMs: number,
  log: (line: string) => void,
): NodeJS.Timeout {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      for (const dead of await presence.stale(deadAfterMs)) {
        if (dead.startsWith(QUEUE_PREFIX)) {
          await utils.forceUnlockWorkers([dead.slice(QUEUE_PREFIX.length)]);
          log(
            `queue pool ${dead.slice(QUEUE_PREFIX.length)} stopped sending heartbeats: its jobs went back to the queue`,
          );
        } else {
          log(`worker ${dead} stopped sending heartbeats`);
        }
        await presence.forget(dead);
      }
    } catch {
      // The next round tries again.
    } finally {
      busy = false;
    }
  }, 1000);
  timer.unref();
  return timer;
}
