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
