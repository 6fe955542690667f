/**
 * What a thread job carries: the request a detached runner would read on its stdin (a forked
 * directive's `PreparedThread` and its project, a continuation, an async tool run), as JSON. The
 * queue does not look inside: the worker's handler checks it where it arrives, as the runner does.
 */

/** The Graphile Worker task every thread job runs as. */
export const THREAD_TASK = 'rye_thread';

export interface ThreadJob {
  kind: string;
  project_path: string;
  thread_id: string;
  [field: string]: unknown;
}

/**
 * The presence row of a worker's Graphile Worker pool, beside its own: Graphile Worker locks jobs
 * with the pool's (random) id, so a dead worker's jobs are unlocked by that id.
 */
export const QUEUE_PREFIX = 'queue:';

/** A failed job runs again this often at most: a thread that cannot run is recorded as failed by its handler instead. */
const MAX_ATTEMPTS = 5;

/** How a thread's job is added: keyed by its thread, so a thread is queued once. */
export function jobSpec(job: ThreadJob): { jobKey: string; maxAttempts: number } {
  return { jobKey: `thread:${job.thread_id}`, maxAttempts: MAX_ATTEMPTS };
}
