/**
 * `async: true` (spec threads §11, DECISIONS 26): the run goes on in a detached process of its
 * own, started from the typed settings with §11's environment only, and the caller gets
 * `{status: "success", async: true, …, state: "running", pid}` at once.
 *
 * - A forked directive is set up here (registered, limits, spawn count, budget, signed
 *   `thread.json`: a setup error is the caller's, synchronously); the detached process runs its
 *   loop and finalizes it. Its id is directive-named.
 * - A tool gets a UUID thread id and a registry row; the detached process runs it through the
 *   same `execute` and stores its result in the registry (and its output in `spawn.log`).
 */
import { randomUUID } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope, RyeSettings } from '@ryeos/executor';
import { canonicalRef, elapsed } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import type { PreparedThread } from '@ryeos/threads';
import { packageRoot } from '../package-root.js';

/** The script a detached run starts: `dist/thread-runner.js` of this package. */
export function threadRunnerPath(settings?: RyeSettings): string {
  return settings?.env.RYE_THREAD_RUNNER || join(packageRoot(), 'dist', 'thread-runner.js');
}

/** What the detached runner reads on stdin. */
export type DetachedRequest =
  | {
      kind: 'directive';
      project_path: string;
      thread_id: string;
      directive_id: string;
      inputs: Record<string, unknown>;
      model?: string;
      limit_overrides?: Record<string, unknown>;
      parent_thread_id?: string;
      /** The setup the caller made (`runThread`'s `detach`): the runner starts the loop from it. */
      prepared: PreparedThread;
    }
  | {
      kind: 'tool';
      project_path: string;
      thread_id: string;
      item_id: string;
      parameters: Record<string, unknown>;
    }
  /** The orchestrator's resume_thread / handoff_thread: a continuation run to its end. */
  | { kind: 'resume' | 'handoff'; project_path: string; thread_id: string; message?: string };

/** What was asked, beside the thread's records (the setup itself goes to the runner only: it is in thread.json, capabilities.md and the transcript). */
function writeSpawnParams(threadDirectory: string, request: DetachedRequest): void {
  const { prepared: _setup, ...asked } = request as DetachedRequest & { prepared?: unknown };
  writeFileSync(join(threadDirectory, 'spawn_params.json'), `${JSON.stringify(asked, null, 2)}\n`, {
    mode: 0o600,
  });
}

/** How the runner is started: the kernel node, the runner script, §11's environment. */
async function runnerLaunch(settings: RyeSettings, projectPath: string, logPath: string) {
  const { detachedEnv } = await import('@ryeos/threads');
  const node = settings.kernelNode ?? process.execPath;
  return {
    node,
    args: [threadRunnerPath(settings)],
    env: detachedEnv(settings.env, { RYE_KERNEL_NODE: node, USER_SPACE: settings.userSpace }),
    logPath,
    cwd: projectPath,
  };
}

/**
 * Starts the detached runner for `request`; resolves with its pid once it has its request.
 * `recordPid` runs before the hand-over (see `spawnDetached`).
 */
export async function launchDetached(
  settings: RyeSettings,
  request: DetachedRequest,
  threadDirectory: string,
  recordPid?: (pid: number) => void,
): Promise<number> {
  const { spawnDetached } = await import('@ryeos/threads');
  writeSpawnParams(threadDirectory, request);
  return spawnDetached(
    {
      ...(await runnerLaunch(settings, request.project_path, join(threadDirectory, 'spawn.log'))),
      input: JSON.stringify(request),
    },
    recordPid,
  );
}

/** A runner started before its thread is set up (`startRunnerEarly`). */
export interface EarlyRunner {
  pid: number;
  /**
   * Hands it its request: its log moves into the thread's folder, `recordPid` runs, and the
   * request goes on its stdin; resolves once the runner has it. On a failure the runner is killed.
   */
  start(request: DetachedRequest, threadDirectory: string, recordPid: (pid: number) => void): Promise<number>;
  /** The thread will not run (its setup failed): the runner is killed and its log removed. */
  abandon(): void;
}

/**
 * A forked directive's `async: true` starts its runner first, so that the runner's start-up (node,
 * its modules) overlaps the thread's setup here; the runner waits for its request on stdin. Its
 * log starts as `.runner-<uuid>.log` in the threads state folder and is renamed into the thread's
 * folder once the thread has one (the open file follows the rename).
 */
export async function startRunnerEarly(settings: RyeSettings, projectPath: string): Promise<EarlyRunner> {
  const { ensureThreadsStateRoot, startDetached, threadsStateRoot } = await import('@ryeos/threads');
  const pendingLog = join(
    ensureThreadsStateRoot(threadsStateRoot(projectPath)),
    `.runner-${randomUUID()}.log`,
  );
  let child: Awaited<ReturnType<typeof startDetached>>;
  try {
    child = await startDetached(await runnerLaunch(settings, projectPath, pendingLog));
  } catch (error) {
    rmSync(pendingLog, { force: true });
    throw error;
  }
  let pending = true;
  const abandon = () => {
    child.abandon();
    if (pending) rmSync(pendingLog, { force: true });
  };
  return {
    pid: child.pid,
    async start(request, threadDirectory, recordPid) {
      try {
        renameSync(pendingLog, join(threadDirectory, 'spawn.log'));
        pending = false;
        writeSpawnParams(threadDirectory, request);
        recordPid(child.pid);
      } catch (error) {
        abandon();
        throw error;
      }
      await child.send(JSON.stringify(request));
      return child.pid;
    },
    abandon,
  };
}

/** `execute(tool, async: true)`: a UUID thread that runs the tool detached. */
export async function launchAsyncTool(
  settings: RyeSettings,
  projectPath: string,
  toolId: string,
  parameters: Record<string, unknown>,
  parentThreadId: string | undefined,
  start: number,
): Promise<Envelope> {
  const itemId = canonicalRef('tool', toolId);
  const { ensureThreadDir, openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
  const stateRoot = threadsStateRoot(projectPath);
  const threadId = randomUUID();
  let store: ReturnType<typeof openThreadStore> | undefined;
  try {
    store = openThreadStore(stateRoot);
    store.registry.register(threadId, `tool/${toolId}`, parentThreadId ?? null);
    store.registry.updateStatus(threadId, 'running');
    const registry = store.registry;
    const pid = await launchDetached(
      settings,
      { kind: 'tool', project_path: projectPath, thread_id: threadId, item_id: itemId, parameters },
      ensureThreadDir(stateRoot, threadId),
      (started) => registry.updatePid(threadId, started),
    );
    return {
      status: 'success',
      async: true,
      type: 'tool',
      item_id: itemId,
      thread_id: threadId,
      execution_mode: 'inline',
      state: 'running',
      pid,
      metadata: elapsed(start),
    } as Envelope;
  } catch (error) {
    try {
      store?.registry.updateStatus(threadId, 'error');
      store?.registry.setResult(threadId, { error: (error as Error).message });
    } catch {
      // The caller still gets the error.
    }
    return toErrorEnvelope(error, { type: 'tool', item_id: itemId, metadata: elapsed(start) });
  } finally {
    store?.close();
  }
}
