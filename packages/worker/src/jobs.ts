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

/** The Graphile Worker ids of one `rye worker`'s slots: `<worker-id>/<slot>`. */
export function slotIds(workerId: string, concurrency: number): string[] {
  return Array.from({ length: concurrency }, (_, slot) => `${workerId}/${slot}`);
}

/** The most jobs one worker runs at once (its slots are all unlocked when it dies). */
export const MAX_CONCURRENCY = 64;
