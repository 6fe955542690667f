/**
 * A queued async tool run (`execute(tool, async)` with a database configured) on a `rye worker`.
 * The job came through the database, a trust boundary: it must be the run its caller registered
 * (its row's tool and parent), still `running` (a run cancelled while queued never starts), and
 * never taken up before (a run whose worker died mid-call may have had its effect: it is recorded
 * as interrupted, not run twice); a thread's run must be one its signed record grants; and the
 * tool's chain is verified again as it runs, as in any call.
 */
import { join } from 'node:path';
import { PROVIDER_KEY_NAMES } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { ThreadStore, ThreadStoreOpener } from '@ryeos/threads';
import type { ThreadJob } from '@ryeos/worker';
import type { ToolRunRequest } from '../execute/tool-run.js';
import type { Rye } from '../rye.js';
import { restoreShared } from './shared-records.js';

const TOOL_PREFIX = 'tool:';
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const INTERRUPTED_TOOL_RUN =
  'The tool run was interrupted: the worker running it stopped mid-run. It is not run again, since it may already have taken effect.';

function invalid(what: string): RyeError {
  return new RyeError('VALIDATION', `A queued tool run is malformed: ${what}`, {
    hint: 'Queued jobs are written by ryeos; this one was changed in the database and is not run.',
  });
}

/** The job as a tool run request, its fields checked where they arrive. */
export function parseToolJob(job: ThreadJob): ToolRunRequest & { withheld_env: string[] } {
  const { item_id, parameters, parent_thread_id, deadline, withheld_env, remote } = job;
  if (typeof item_id !== 'string' || !item_id.startsWith(TOOL_PREFIX)) throw invalid('item_id is not a tool');
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw invalid('parameters is not an object');
  }
  if (parent_thread_id !== undefined && typeof parent_thread_id !== 'string') {
    throw invalid('parent_thread_id is not a thread id');
  }
  if (deadline !== undefined && typeof deadline !== 'number') throw invalid('deadline is not a time');
  const withheld = withheld_env ?? [];
  if (
    !Array.isArray(withheld) ||
    withheld.some((name) => typeof name !== 'string' || !VARIABLE_NAME.test(name))
  ) {
    throw invalid('withheld_env is not a list of variable names');
  }
  // Remote runs stay with the detached runner: they are never queued.
  if (remote !== undefined) throw invalid('a remote run is not queued');
  return {
    kind: 'tool',
    project_path: job.project_path,
    thread_id: job.thread_id,
    item_id,
    parameters: parameters as Record<string, unknown>,
    ...(parent_thread_id !== undefined ? { parent_thread_id } : {}),
    ...(deadline !== undefined ? { deadline } : {}),
    withheld_env: withheld as string[],
  };
}

/** Takes the run up once: answers false when another worker took it up before (and died). */
async function takeUp(store: ThreadStore, request: ToolRunRequest): Promise<boolean | 'skip'> {
  const row = await store.registry.getThread(request.thread_id);
  if (!row) throw invalid(`no registry row for ${request.thread_id}`);
  if (row.status !== 'running') return 'skip';
  const toolId = request.item_id.slice(TOOL_PREFIX.length);
  if (row.directive !== `tool/${toolId}` || (row.parent_id ?? undefined) !== request.parent_thread_id) {
    throw new RyeError(
      'INTEGRITY',
      `The queued tool run ${request.thread_id} is not the run its caller registered`,
      {
        hint: 'The job was changed in the database after it was queued; it is not run.',
      },
    );
  }
  return store.registry.claimPid(request.thread_id, null, process.pid);
}

/** A thread's run: the thread's signed record must verify and grant this tool. */
async function checkGranted(rye: Rye, request: ToolRunRequest, parentId: string): Promise<void> {
  const { checkPermission, readThreadJson, threadsStateRoot } = await import('@ryeos/threads');
  const dir = join(threadsStateRoot(rye.projectPath), parentId);
  const { data, verification } = await readThreadJson(dir, (await rye.executor()).trust);
  const toolId = request.item_id.slice(TOOL_PREFIX.length);
  const capabilities = verification.valid && data.thread_id === parentId ? data.capabilities : [];
  if (!checkPermission(capabilities, { primary: 'execute', itemType: 'tool', itemId: toolId }).allowed) {
    throw new RyeError(
      'INTEGRITY',
      `The queued tool run ${request.thread_id} is not one thread ${parentId} may start (${verification.valid ? 'not granted' : verification.error})`,
      { hint: "Only a tool its thread's signed thread.json grants runs on a worker as that thread's child." },
    );
  }
}

export async function runToolJob(
  rye: Rye,
  job: ThreadJob,
  opener: ThreadStoreOpener,
): Promise<{ status: string }> {
  const request = parseToolJob(job);
  const store = await opener(rye.projectPath);
  try {
    const taken = await takeUp(store, request);
    if (taken === 'skip') return { status: 'not run (no longer running)' };
    if (!taken) {
      await store.registry.setResult(request.thread_id, { status: 'error', error: INTERRUPTED_TOOL_RUN });
      await store.registry.updateStatus(request.thread_id, 'error');
      return { status: 'interrupted' };
    }
  } finally {
    await store.close();
  }
  if (request.parent_thread_id) {
    await restoreShared(rye, opener, [request.parent_thread_id]);
    await checkGranted(rye, request, request.parent_thread_id);
  }
  // A thread's run never sees provider keys, whatever the job says; a caller's own withholdings hold too.
  const withheld = new Set(request.withheld_env);
  if (request.parent_thread_id) for (const name of PROVIDER_KEY_NAMES) withheld.add(name);
  const { runToolRun } = await import('../execute/tool-run.js');
  const { envelope, stopped } = await runToolRun(rye, request, { store: opener, withheldEnv: [...withheld] });
  return { status: stopped ? 'cancelled' : envelope.status };
}
