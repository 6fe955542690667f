/**
 * @ryeos/worker: the run queue of RYE OS on PostgreSQL (Graphile Worker) and the worker loop that
 * runs its thread jobs, with heartbeats so that a dead worker's jobs go to the others within
 * seconds. What a job does is the caller's handler (the `rye worker` command of `ryeos`).
 * Importing it loads no database client.
 */
export { THREAD_TASK, type ThreadJob } from './jobs.js';
export { openThreadQueue, type ThreadQueue } from './queue.js';
export {
  type JobContext,
  type JobResult,
  startWorker,
  type WorkerHandle,
  type WorkerOptions,
} from './worker.js';
