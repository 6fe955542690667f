/**
 * `async: true` (spec threads §11, DECISIONS 26): the run goes on in a detached process of its
 * own, started from the typed settings with §11's environment only, and the caller gets
 * `{status: "success", async: true, …, state: "running", pid}` at once.
 *
 * - A forked directive is set up here (registered, limits, spawn count, budget, signed
 *   `thread.json`: a setup error is the caller's, synchronously); the detached process runs its
 *   loop and finalizes it. Its id is directive-named.
 * - A tool gets a UUID thread id and a registry row; the detached process runs it through the
 *   same `execute` and stores its result in the registry (and its output in `spawn.log`). One a
 *   thread starts is that thread's child: it takes a spawn and stops with the thread.
 */
import { randomUUID } from 'node:crypto';
import { realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope, Executor, RyeSettings } from '@ryeos/executor';
import { canonicalRef, elapsed } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import type { ParsedEntry, PreparedThread, ThreadStore } from '@ryeos/threads';
import { packageRoot } from '../package-root.js';
import { databaseStoreOpener, enqueueThread } from '../queue/database.js';

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
      /** The W3C `traceparent` of the call that forked it: the run's spans continue that trace. */
      trace_parent?: string;
      /** The setup the caller made (`runThread`'s `detach`): the runner starts the loop from it. */
      prepared: PreparedThread;
      /**
       * The config files the caller parsed (`parsedForHandOff`), so the children this thread sets
       * up in the runner do not parse them again (each file is still read and verified there).
       */
      parsed?: ParsedEntry[];
    }
  | {
      kind: 'tool';
      project_path: string;
      thread_id: string;
      item_id: string;
      parameters: Record<string, unknown>;
      /** The thread that started it: the run stops when that thread fails or is cancelled. */
      parent_thread_id?: string;
      /** Epoch ms when the parent thread's duration ends: the run is stopped then. */
      deadline?: number;
      /**
       * A remote run (`item_id` is then the remote tool): the runner executes this item with this
       * target, and its registry row gets the remote envelope and the server's thread id.
       */
      remote?: RemoteRun;
    }
  /** The orchestrator's resume_thread / handoff_thread: a continuation run to its end. */
  | { kind: 'resume' | 'handoff'; project_path: string; thread_id: string; message?: string };

/** What an async remote run executes: the item, its target and (for a directive) its fork options. */
export interface RemoteRun {
  item_id: string;
  target: string;
  thread: 'inline' | 'fork';
  model?: string;
  limit_overrides?: Record<string, unknown>;
  /** The forked directive's own `<limits>`, for the parent's admission only (never sent on). */
  directive_limits?: Record<string, unknown>;
}

/** What was asked, beside the thread's records (the setup itself goes to the runner only: it is in thread.json, capabilities.md and the transcript). */
function writeSpawnParams(threadDirectory: string, request: DetachedRequest): void {
  const {
    prepared: _setup,
    parsed: _parsed,
    ...asked
  } = request as DetachedRequest & {
    prepared?: unknown;
    parsed?: unknown;
  };
  writeFileSync(join(threadDirectory, 'spawn_params.json'), `${JSON.stringify(asked, null, 2)}\n`, {
    mode: 0o600,
  });
}

/**
 * How the runner is started: the kernel node, the runner script, §11's environment less the
 * `withheld` host variables (a thread's provider keys: the runner's tool inherits its environment).
 */
async function runnerLaunch(
  settings: RyeSettings,
  projectPath: string,
  logPath: string,
  withheld: readonly string[] = [],
) {
  const { detachedEnv } = await import('@ryeos/threads');
  const node = settings.kernelNode ?? process.execPath;
  const env = detachedEnv(settings.env, { RYE_KERNEL_NODE: node, USER_SPACE: settings.userSpace });
  for (const name of withheld) delete env[name];
  return { node, args: [threadRunnerPath(settings)], env, logPath, cwd: projectPath };
}

/**
 * Starts the detached runner for `request`; resolves with its pid once its request is in its pipe.
 * `recordPid` runs before the hand-over (see `spawnDetached`).
 */
export async function launchDetached(
  settings: RyeSettings,
  request: DetachedRequest,
  threadDirectory: string,
  recordPid?: (pid: number) => Promise<void> | void,
  withheldEnv?: readonly string[],
): Promise<number> {
  const { spawnDetached } = await import('@ryeos/threads');
  writeSpawnParams(threadDirectory, request);
  const logPath = join(threadDirectory, 'spawn.log');
  return spawnDetached(
    {
      ...(await runnerLaunch(settings, request.project_path, logPath, withheldEnv)),
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
   * request goes on its stdin; resolves once the request is in its pipe. On a failure the runner
   * is killed.
   */
  start(
    request: DetachedRequest,
    threadDirectory: string,
    recordPid: (pid: number) => Promise<void> | void,
  ): Promise<number>;
  /** The thread will not run (its setup failed): the runner is killed and its log removed. */
  abandon(): void;
  /**
   * It can still run a thread of this project: it has not exited, and the project folder and its
   * pending log are the ones it started with (a project folder replaced since, say by a new
   * checkout behind the same path, needs a new runner).
   */
  usable(): boolean;
  /**
   * It was started ahead, as a spare, rather than for this call: it does not keep its host alive
   * while it waits (its stdin then closes when the host ends, and so does it).
   */
  readonly spare: boolean;
}

/** What a runner's place was when it started: the project's real path, its pending log's inode. */
function placeOf(projectPath: string, pendingLog: string): string | undefined {
  try {
    return `${realpathSync(projectPath)}\u0000${statSync(pendingLog).ino}`;
  } catch {
    return undefined;
  }
}

/**
 * A forked directive's `async: true` starts its runner first, so that the runner's start-up (node,
 * its modules) overlaps the thread's setup here; the runner waits for its request on stdin. Its
 * log starts as `.runner-<uuid>.log` in the threads state folder and is renamed into the thread's
 * folder once the thread has one (the open file follows the rename).
 */
export async function startRunnerEarly(
  settings: RyeSettings,
  projectPath: string,
  spare = false,
): Promise<EarlyRunner> {
  const { ensureThreadsStateRoot, startDetached, threadsStateRoot } = await import('@ryeos/threads');
  const pendingLog = join(
    ensureThreadsStateRoot(threadsStateRoot(projectPath)),
    `.runner-${randomUUID()}.log`,
  );
  const launch = await runnerLaunch(settings, projectPath, pendingLog);
  let child: Awaited<ReturnType<typeof startDetached>>;
  try {
    // It removes its pending log itself if it ends without a request (its host went away).
    child = await startDetached({ ...launch, args: [...launch.args, PENDING_LOG_FLAG, pendingLog] });
  } catch (error) {
    rmSync(pendingLog, { force: true });
    throw error;
  }
  if (spare) child.unref();
  let pending = true;
  const place = placeOf(projectPath, pendingLog);
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
        await recordPid(child.pid);
      } catch (error) {
        abandon();
        throw error;
      }
      await child.send(JSON.stringify(request));
      return child.pid;
    },
    abandon,
    usable: () => child.alive() && place !== undefined && placeOf(projectPath, pendingLog) === place,
    spare,
  };
}

/** The runner's argument naming its pending log (see `startRunnerEarly`). */
export const PENDING_LOG_FLAG = '--pending-log';

/** How long a spare runner waits for a thread before it is stopped (as warm tool workers). */
const SPARE_IDLE_MS = 60_000;
/**
 * A spare is started this long after the async fork that used the last one: that fork's runner
 * already has its request and is past its start, so they hardly compete.
 */
const SPARE_DELAY_MS = 50;

interface Spare {
  runner: Promise<EarlyRunner | undefined>;
  timer: NodeJS.Timeout;
}

/**
 * At most one spare runner per launch (node, runner script, environment, project), and at most
 * `MAX_SPARES` in all (a host serving many projects keeps the most recently used).
 */
const spares = new Map<string, Spare>();
const MAX_SPARES = 2;

function dropSpare(key: string): void {
  const spare = spares.get(key);
  if (!spare) return;
  spares.delete(key);
  clearTimeout(spare.timer);
  void spare.runner.then((runner) => runner?.abandon());
}

/**
 * What a spare must match to be used: the launch, and the node binary and runner script as they
 * are on disk now (a spare runs the code it loaded when it started, so an update replaces it).
 */
async function spareKey(settings: RyeSettings, projectPath: string): Promise<string> {
  const { node, args, env } = await runnerLaunch(settings, projectPath, '');
  const stamps = [node, ...args].map((file) => {
    try {
      const { ino, mtimeMs, size } = statSync(file);
      return `${ino}:${mtimeMs}:${size}`;
    } catch {
      return '';
    }
  });
  return JSON.stringify([node, args, env, projectPath, stamps]);
}

/** Spares asked for whose `SPARE_DELAY_MS` has not passed yet, with their project. */
const scheduledSpares = new Map<NodeJS.Timeout, string>();

/**
 * A runner for an async fork: the spare a long-lived host keeps (started, modules loaded,
 * waiting for a thread) when there is one for exactly this launch and it is still alive, else a
 * new one (`startRunnerEarly`).
 */
export async function acquireRunner(settings: RyeSettings, projectPath: string): Promise<EarlyRunner> {
  // A spare of this project not started yet would only boot beside this fork's runner, competing
  // with it: the fork asks for one again once it has its thread.
  for (const [timer, project] of scheduledSpares) {
    if (project !== projectPath) continue;
    clearTimeout(timer);
    scheduledSpares.delete(timer);
  }
  if (spares.size === 0) return startRunnerEarly(settings, projectPath);
  const key = await spareKey(settings, projectPath);
  const spare = spares.get(key);
  if (spare) {
    spares.delete(key);
    clearTimeout(spare.timer);
    const runner = await spare.runner;
    if (runner?.usable()) return runner;
    runner?.abandon();
  }
  return startRunnerEarly(settings, projectPath);
}

/**
 * Keeps a spare runner for the next async fork of this launch (a long-lived host: the MCP server,
 * an application, a thread that forks children), so that fork skips the runner's start. Started
 * shortly after the fork that asked, stopped after `SPARE_IDLE_MS` unused; it never keeps its
 * host alive, and ends (removing its log) when its host does.
 */
export function keepSpareRunner(settings: RyeSettings, projectPath: string): void {
  const timer = setTimeout(async () => {
    scheduledSpares.delete(timer);
    const key = await spareKey(settings, projectPath).catch(() => undefined);
    if (!key || spares.has(key)) return;
    const runner = startRunnerEarly(settings, projectPath, true).catch(() => undefined);
    const idle = setTimeout(() => {
      if (spares.get(key)?.runner === runner) dropSpare(key);
    }, SPARE_IDLE_MS);
    idle.unref();
    spares.set(key, { runner, timer: idle });
    while (spares.size > MAX_SPARES) dropSpare(spares.keys().next().value as string);
  }, SPARE_DELAY_MS);
  timer.unref();
  scheduledSpares.set(timer, projectPath);
}

/**
 * `execute(tool, async: true)`: a UUID thread that runs the tool detached. `withheldEnv` is what
 * the caller's sync calls withhold (a thread's provider keys): the runner is started without them.
 */
export async function launchAsyncTool(
  settings: RyeSettings,
  projectPath: string,
  toolId: string,
  parameters: Record<string, unknown>,
  parent: { threadId: string; executor(): Promise<Executor> } | undefined,
  start: number,
  withheldEnv?: readonly string[],
  remote?: RemoteRun,
): Promise<Envelope> {
  const itemId = remote?.item_id ?? canonicalRef('tool', toolId);
  const { admitRemoteRun, admitToolRun, ensureThreadDir, openThreadStore, threadsStateRoot } = await import(
    '@ryeos/threads'
  );
  const stateRoot = threadsStateRoot(projectPath);
  const threadId = randomUUID();
  const parentThreadId = parent?.threadId;
  // With a database a local run goes to the run queue, its row in PostgreSQL beside its thread's.
  const database = remote ? undefined : databaseStoreOpener(settings);
  let store: ThreadStore | undefined;
  let registered = false;
  let reserved = false;
  try {
    store = database ? await database(projectPath) : openThreadStore(stateRoot);
    // A thread's async tool run is its child: admitted (a spawn taken) before anything is registered.
    const trust = parent ? (await parent.executor()).trust : undefined;
    // A remote fork is also paid from the thread: its spend reserved, its limits capped by it.
    const admission: { deadline: number; limitOverrides?: Record<string, unknown> } | undefined =
      parent && trust && remote?.thread === 'fork'
        ? await admitRemoteRun({
            store,
            projectPath,
            parentThreadId: parent.threadId,
            childId: threadId,
            trust,
            ...(remote.limit_overrides ? { limitOverrides: remote.limit_overrides } : {}),
            ...(remote.directive_limits ? { directiveLimits: remote.directive_limits } : {}),
          })
        : parent && trust
          ? await admitToolRun({ store, projectPath, parentThreadId: parent.threadId, trust })
          : undefined;
    reserved = admission?.limitOverrides !== undefined;
    const { directive_limits: _admittedOnly, ...asked } = remote ?? ({} as Partial<RemoteRun>);
    const sent: RemoteRun | undefined = remote
      ? {
          ...(asked as RemoteRun),
          ...(admission?.limitOverrides ? { limit_overrides: admission.limitOverrides } : {}),
        }
      : undefined;
    await store.registry.register(threadId, `tool/${toolId}`, parentThreadId ?? null);
    registered = true;
    await store.registry.updateStatus(threadId, 'running');
    const registry = store.registry;
    const request: DetachedRequest & { kind: 'tool' } = {
      kind: 'tool',
      project_path: projectPath,
      thread_id: threadId,
      item_id: itemId,
      parameters,
      ...(parentThreadId ? { parent_thread_id: parentThreadId } : {}),
      ...(admission && Number.isFinite(admission.deadline) ? { deadline: admission.deadline } : {}),
      ...(sent ? { remote: sent } : {}),
    };
    const pid = database
      ? await enqueueToolRun(settings, request, withheldEnv, () => registry.markQueued?.(threadId))
      : await launchDetached(
          settings,
          request,
          ensureThreadDir(stateRoot, threadId),
          (started) => registry.updatePid(threadId, started),
          withheldEnv,
        );
    return {
      status: 'success',
      async: true,
      type: remote?.item_id.startsWith('directive:') ? 'directive' : 'tool',
      item_id: itemId,
      thread_id: threadId,
      execution_mode: remote ? 'remote' : 'inline',
      state: 'running',
      // A queued run has no process yet: a `rye worker` takes it up.
      ...(pid === undefined ? { queued: true } : { pid }),
      metadata: elapsed(start),
    } as Envelope;
  } catch (error) {
    try {
      if (reserved) await store?.ledger.end(threadId, 'error');
      if (registered) {
        await store?.registry.updateStatus(threadId, 'error');
        await store?.registry.setResult(threadId, { error: (error as Error).message });
      }
    } catch {
      // The caller still gets the error.
    }
    return toErrorEnvelope(error, { type: 'tool', item_id: itemId, metadata: elapsed(start) });
  } finally {
    await store?.close();
  }
}

/**
 * An async tool run with a database configured: its job goes to the run queue (with the variables
 * its caller withholds, which the worker withholds too); answers no pid, the run has no process yet.
 */
async function enqueueToolRun(
  settings: RyeSettings,
  request: DetachedRequest & { kind: 'tool' },
  withheldEnv: readonly string[] | undefined,
  markQueued: () => Promise<void> | undefined,
): Promise<undefined> {
  await enqueueThread(
    settings,
    { ...request, ...(withheldEnv?.length ? { withheld_env: [...withheldEnv] } : {}) },
    async () => {
      await markQueued();
    },
  );
  return undefined;
}
