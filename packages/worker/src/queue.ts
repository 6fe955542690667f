/**
 * Putting thread jobs on the queue. A job is keyed by its thread, so enqueuing one thread twice
 * leaves one job.
 */
import { RyeError } from '@ryeos/lillux';
import type { WorkerUtils } from 'graphile-worker';
import { jobSpec, THREAD_TASK, type ThreadJob } from './jobs.js';
import { quietLogger } from './logger.js';

export interface ThreadQueue {
  enqueue(job: ThreadJob): Promise<void>;
  close(): Promise<void>;
}

export async function openThreadQueue(connectionString: string): Promise<ThreadQueue> {
  const { makeWorkerUtils } = await import('graphile-worker');
  let utils: WorkerUtils;
  try {
    utils = await makeWorkerUtils({ connectionString, logger: await quietLogger(() => {}) });
    await utils.migrate();
  } catch (error) {
    throw new RyeError('UNAVAILABLE', 'Could not open the run queue in PostgreSQL', {
      hint: 'Check RYE_DATABASE_URL (or --database-url) and that the server is running and reachable.',
      details: { reason: (error as Error).message?.replace(/postgres(ql)?:\/\/\S+/g, '<url>') },
    });
  }
  return {
    async enqueue(job) {
      await utils.addJob(THREAD_TASK, job, jobSpec(job));
    },
    close: async () => {
      await utils.release();
    },
  };
}
