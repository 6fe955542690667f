/**
 * What a `rye worker` does with one thread job: the detached runner's work, on the database's
 * store. The job came through the database, a trust boundary: its project must be one this
 * worker serves, its setup must be that of the thread's signed, trusted `thread.json` (identity,
 * model, limits, budget, capabilities), its model and hooks are derived again from the signed
 * items here, and every item it runs is verified as in a local run.
 */
import { realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { RyeSettings } from '@ryeos/executor';
import { RyeError, toRyeError } from '@ryeos/lillux';
import type { PreparedThread, ThreadHost, ThreadStoreOpener } from '@ryeos/threads';
import type { ThreadJob } from '@ryeos/worker';
import { createRye, type Rye } from '../rye.js';
import { databaseStoreOpener } from './database.js';
import { restoreShared } from './shared-records.js';

export interface JobRunnerOptions {
  settings: RyeSettings;
  /** The project folders this worker runs threads of (real paths); a job for another is refused. */
  projects: readonly string[];
}

export interface JobOutcome {
  status: string;
  /** Handed back between turns (the worker is stopping): the job goes back on the queue. */
  requeue?: boolean;
}

/** What the worker tells a job while it runs. */
export interface JobSignals {
  /** Aborted when the worker stops: a thread then ends its current turn and is handed back. */
  stopping?: AbortSignal;
}

function realProject(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Checks the job's project is one this worker serves; answers its real path. */
function servedProject(job: ThreadJob, projects: readonly string[]): string {
  const real = typeof job.project_path === 'string' ? realProject(job.project_path) : undefined;
  if (!real || !projects.includes(real)) {
    throw new RyeError('PERMISSION', `This worker does not serve the project of thread '${job.thread_id}'`, {
      hint: 'Start a worker with --project <that folder> on a machine that has it, or enqueue from a served project.',
    });
  }
  return real;
}

/**
 * The setup this worker runs: the job's only as far as the thread's signed, trusted `thread.json`
 * vouches for it, with its model, provider, hooks and configuration derived again here.
 */
async function vouchedSetup(rye: Rye, host: ThreadHost, prepared: PreparedThread): Promise<PreparedThread> {
  const { readThreadJson, threadsStateRoot, vouchQueuedSetup } = await import('@ryeos/threads');
  const dir = join(threadsStateRoot(rye.projectPath), prepared.thread_id);
  const { data, verification } = await readThreadJson(dir, (await rye.executor()).trust);
  if (!verification.valid) {
    throw new RyeError(
      'INTEGRITY',
      `Thread '${prepared.thread_id}' cannot run from the queue: ${verification.error}`,
      {
        hint: 'Only a thread set up by a trusted key (its thread.json signed) runs on a worker.',
      },
    );
  }
  return await vouchQueuedSetup(host, prepared, data);
}

/** Runs thread jobs; one `Rye` per project, created on its first job. */
export function jobRunner(
  options: JobRunnerOptions,
): (job: ThreadJob, signals?: JobSignals) => Promise<JobOutcome> {
  const ryes = new Map<string, Rye>();
  const opener = databaseStoreOpener(options.settings) as ThreadStoreOpener;
  const projects = options.projects;
  return async (job, signals = {}) => {
    // Another worker may serve it: the job fails here and Graphile Worker retries it.
    const projectPath = servedProject(job, projects);
    try {
      if (job.kind !== 'directive' && job.kind !== 'tool') {
        throw new RyeError('VALIDATION', `A '${String(job.kind)}' job cannot run on a worker`, {
          hint: 'Forked directives and tool runs made with async are queued; run this one without RYE_DATABASE_URL.',
        });
      }
      let rye = ryes.get(projectPath);
      if (!rye) {
        rye = createRye({ projectPath, settings: options.settings });
        ryes.set(projectPath, rye);
      }
      if (job.kind === 'tool') {
        const { runToolJob } = await import('./tool-job.js');
        return await runToolJob(rye, job, opener);
      }
      return await runDirectiveJob(rye, job, opener, signals.stopping);
    } catch (error) {
      const failure = toRyeError(error);
      const { abandonThread } = await import('@ryeos/threads');
      await abandonThread(projectPath, job.thread_id, failure.message, { store: opener });
      return { status: `refused (${failure.code}: ${failure.message})` };
    }
  };
}

async function runDirectiveJob(
  rye: Rye,
  job: ThreadJob,
  opener: ThreadStoreOpener,
  stopping: AbortSignal | undefined,
): Promise<JobOutcome> {
  const [{ parsePreparedThread, runPreparedThread }, { forkHost }] = await Promise.all([
    import('@ryeos/threads'),
    import('../execute/fork.js'),
  ]);
  const queued = parsePreparedThread(job.prepared, job.thread_id);
  await restoreShared(rye, opener, [job.thread_id]);
  const host = forkHost(rye.settings, rye.projectPath, rye.threadDispatch(), await rye.executor(), opener);
  const prepared = await vouchedSetup(rye, host, queued);
  const result = await runPreparedThread(host, prepared, {
    threadId: job.thread_id,
    queued: true,
    ...(stopping ? { handBack: stopping } : {}),
    // Only ever a parent span's id: a malformed value is ignored where it is parsed.
    ...(typeof job.trace_parent === 'string' ? { traceParent: job.trace_parent } : {}),
  });
  // Another worker took it up while this one stalled: its row is that worker's, left as it is.
  if (result.taken_over) return { status: 'stopped: taken up by another worker' };
  if (!result.handed_back) return { status: result.status };
  // No longer this worker's: no liveness check fails it while it waits for the next one.
  const store = await opener(rye.projectPath);
  try {
    await store.registry.markQueued?.(job.thread_id);
  } finally {
    await store.close();
  }
  return { status: `handed back after turn ${result.cost.turns}`, requeue: true };
}

/** Real paths of the served projects (each must exist). */
export function servedProjects(paths: readonly string[]): string[] {
  return paths.map((path) => {
    const real = realProject(path);
    if (!real) {
      throw new RyeError('NOT_FOUND', `Project folder ${path} does not exist`, {
        hint: 'Give --project the folder of a ryeos project on this machine.',
      });
    }
    return real.endsWith(sep) && real.length > 1 ? real.slice(0, -1) : real;
  });
}
