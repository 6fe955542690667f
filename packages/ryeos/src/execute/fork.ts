/**
 * `execute(directive, thread: "fork")`: the directive runs in a managed thread of
 * `@ryeos/threads`, loaded only now (better-sqlite3 and the runner are never loaded by a
 * search, a load or a tool call). The thread's tool calls come back through `dispatch`, the
 * same four operations every other caller uses.
 */
import type { Envelope, Executor, RyeSettings } from '@ryeos/executor';
import { canonicalRef, elapsed, findItem } from '@ryeos/executor';
import { toErrorEnvelope, tracer } from '@ryeos/lillux';
import type {
  ForkRequest,
  KeptOpenStores,
  PreparedThread,
  PrimaryDispatch,
  ResumeResult,
  ThreadHost,
  ThreadResult,
  ThreadStoreOpener,
} from '@ryeos/threads';
import { databaseStoreOpener, databaseUrl } from '../queue/database.js';
import type { DetachedRequest, EarlyRunner } from './detach.js';
import type { ExecuteHost } from './host.js';

export interface ForkHost extends ExecuteHost {
  projectPath: string;
  dispatch: PrimaryDispatch;
  /** False for a one-shot host (the CLI): no spare runner is kept for its next async fork. */
  spareRunner?: boolean;
}

export interface ForkOptions {
  directiveId: string;
  inputs: Record<string, unknown>;
  model?: string;
  limitOverrides?: Record<string, unknown>;
  parentThreadId?: string;
  signal?: AbortSignal;
  /** Run detached (`async: true`): set up here, then a process of its own runs the loop. */
  async?: boolean;
  /** Told each transcript event of a thread that runs here (MCP progress notifications). */
  onEvent?: ForkRequest['onEvent'];
}

/**
 * What the threads layer needs of the facade: the executor, settings, project and the four
 * operations (offered to the model as the threads layer's standard primaries).
 */
export function forkHost(
  settings: RyeSettings,
  projectPath: string,
  dispatch: PrimaryDispatch,
  executor: Executor,
  store?: ThreadStoreOpener,
): ThreadHost {
  return { executor, settings, projectPath, dispatch, ...(store ? { store } : {}) };
}

let keptStores: KeptOpenStores | undefined;

/**
 * A long-lived host keeps each project's thread store open between its forks (closing it once
 * idle); a one-shot host (the CLI) opens and closes it once anyway.
 */
function hostStores(threads: typeof import('@ryeos/threads'), host: ForkHost): ThreadStoreOpener | undefined {
  const database = databaseStoreOpener(host.settings);
  if (database) return database;
  if (host.spareRunner === false) return undefined;
  keptStores ??= threads.keptOpenSqliteStores();
  return keptStores.open;
}

/**
 * A long-lived host running a thread that may start children keeps a runner ready for the first,
 * as it does after an async fork.
 */
function readyForChildren(
  host: ForkHost,
  mayStartChildren: (prepared: PreparedThread) => boolean,
): (prepared: PreparedThread) => void {
  return (prepared) => {
    if (!mayStartChildren(prepared)) return;
    void import('./detach.js')
      .then((module) => module.keepSpareRunner(host.settings, host.projectPath))
      .catch(() => undefined);
  };
}

export async function forkDirective(host: ForkHost, options: ForkOptions, start: number): Promise<Envelope> {
  const itemId = canonicalRef('directive', options.directiveId);
  let runner: EarlyRunner | undefined;
  try {
    const threads = await import('@ryeos/threads');
    const { ensureThreadDir, mayStartChildren, parsedForHandOff, runThread, threadsStateRoot } = threads;
    const executor = await host.executor();
    // Async: the runner starts now and loads while the thread is set up here (not for a directive
    // that is not even there: a call that can only fail costs no process).
    const queued = options.async === true && databaseUrl(host.settings) !== undefined;
    const detachModule = options.async && !queued ? await import('./detach.js') : undefined;
    runner =
      detachModule && (await findItem(executor, 'directive', options.directiveId))
        ? await detachModule.acquireRunner(host.settings, host.projectPath)
        : undefined;
    const early = runner;
    // The span this fork was asked from (a parent thread's tool call): a detached or queued run
    // continues its trace.
    const tracing = tracer();
    const traceParent = tracing && (await tracing)?.activeTraceParent();
    const request = (threadId: string, prepared: PreparedThread) => ({
      kind: 'directive' as const,
      project_path: host.projectPath,
      thread_id: threadId,
      directive_id: options.directiveId,
      inputs: options.inputs,
      ...(options.model ? { model: options.model } : {}),
      ...(options.limitOverrides ? { limit_overrides: options.limitOverrides } : {}),
      ...(options.parentThreadId ? { parent_thread_id: options.parentThreadId } : {}),
      ...(traceParent ? { trace_parent: traceParent } : {}),
      prepared,
    });
    const detach = queued
      ? async (threadId: string, prepared: PreparedThread) => {
          await enqueueDirective(host, request(threadId, prepared));
          return 0;
        }
      : detachModule
        ? (threadId: string, prepared: PreparedThread, recordPid: (pid: number) => Promise<void> | void) => {
            const handOff = { ...request(threadId, prepared), parsed: parsedForHandOff() };
            const directory = ensureThreadDir(threadsStateRoot(host.projectPath), threadId);
            if (!early) return detachModule.launchDetached(host.settings, handOff, directory, recordPid);
            if (!early.spare) return early.start(handOff, directory, recordPid);
            // A spare that died (or lost its place) since it was checked: a new runner takes the
            // thread; its setup still holds.
            return early
              .start(handOff, directory, recordPid)
              .catch(() => detachModule.launchDetached(host.settings, handOff, directory, recordPid));
          }
        : undefined;
    const result = await runThread(
      forkHost(
        host.settings as RyeSettings,
        host.projectPath,
        host.dispatch,
        executor,
        hostStores(threads, host),
      ),
      {
        directiveId: options.directiveId,
        inputs: options.inputs,
        ...(options.model ? { model: options.model } : {}),
        ...(options.limitOverrides ? { limitOverrides: options.limitOverrides } : {}),
        ...(options.parentThreadId ? { parentThreadId: options.parentThreadId } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onEvent && !detach ? { onEvent: options.onEvent } : {}),
        ...(detach ? { detach } : {}),
        ...(!detach && host.spareRunner !== false
          ? { onPrepared: readyForChildren(host, mayStartChildren) }
          : {}),
      },
    );
    if (result.async === true && result.success) {
      runner = undefined;
      // A long-lived host keeps the next async fork's runner started.
      if (host.spareRunner !== false) detachModule?.keepSpareRunner(host.settings, host.projectPath);
      return {
        status: 'success',
        async: true,
        type: 'directive',
        item_id: itemId,
        thread_id: result.thread_id,
        directive: result.directive,
        execution_mode: 'fork',
        state: 'running',
        // A queued thread has no process yet: a `rye worker` takes it up.
        ...(queued ? { queued: true } : { pid: result.pid }),
        metadata: elapsed(start),
      } as Envelope;
    }
    return threadEnvelope(result, itemId, start);
  } catch (error) {
    return toErrorEnvelope(error, { type: 'directive', item_id: itemId, metadata: elapsed(start) });
  } finally {
    // A runner started for a thread that did not get going.
    runner?.abandon();
  }
}

/** An async fork with a database configured: its setup goes to the run queue. */
async function enqueueDirective(
  host: Pick<ThreadHost, 'settings' | 'projectPath'>,
  request: DetachedRequest & { kind: 'directive' },
): Promise<void> {
  const [{ enqueueThread }, { shareRecord, threadDir, threadsStateRoot }] = await Promise.all([
    import('../queue/database.js'),
    import('@ryeos/threads'),
  ]);
  const opener = databaseStoreOpener(host.settings)!;
  await enqueueThread(host.settings, request, async () => {
    const store = await opener(host.projectPath);
    try {
      // Its signed setup, for a worker on a machine that does not have this thread's folder.
      const dir = threadDir(threadsStateRoot(host.projectPath), request.thread_id);
      await shareRecord(store.records, dir, request.thread_id, 'thread.json');
      await store.registry.markQueued?.(request.thread_id);
    } finally {
      await store.close();
    }
  });
}

/** A thread that ran here, to its end: its result as the envelope of a directive run. */
function threadEnvelope(result: ThreadResult, itemId: string, start: number): Envelope {
  const {
    success,
    status,
    thread_id,
    directive,
    result: text,
    outputs,
    cost,
    error,
    error_type,
    hint,
    timing,
    ...rest
  } = result;
  const common = {
    type: 'directive' as const,
    item_id: itemId,
    ...(thread_id ? { thread_id } : {}),
    directive,
    thread_status: status,
    cost,
    metadata: { ...elapsed(start), ...(timing ? { timing } : {}) },
  };
  if (success) {
    return {
      status: 'success',
      ...common,
      result: text ?? '',
      ...(outputs ? { outputs } : {}),
      ...rest,
    } as Envelope;
  }
  return {
    status: 'error',
    error: error ?? 'The thread failed',
    // The runner sets it on every failure; a result from an older runner has none.
    error_type: error_type ?? (result.limit_code ? 'limit' : 'execution'),
    ...(hint ? { hint } : {}),
    ...common,
    ...(text ? { result: text } : {}),
    ...(outputs ? { outputs } : {}),
    ...rest,
  } as Envelope;
}

/**
 * `resume_thread`: the last thread of the chain carries on with `message` (spec threads §10.6).
 * `async`: the continuation is set up here, then queued (with a database) or run by a detached
 * runner, and the answer comes at once.
 */
export async function resumeForkedThread(
  host: Omit<ThreadHost, 'primaries'>,
  threadId: string,
  message: string,
  options: { model?: string; signal?: AbortSignal; handoff?: boolean; async?: boolean } = {},
): Promise<ResumeResult> {
  const { resumeThread } = await import('@ryeos/threads');
  const store = databaseStoreOpener(host.settings);
  return resumeThread(forkHost(host.settings, host.projectPath, host.dispatch, host.executor, store), {
    threadId,
    message,
    ...(options.model ? { model: options.model } : {}),
    ...(options.signal && !options.async ? { signal: options.signal } : {}),
    ...(options.handoff ? { handoff: true } : {}),
    ...(options.async ? { detach: continuationDetach(host) } : {}),
  });
}

/** Hands a continuation set up here to the run queue, or else to a detached runner. */
function continuationDetach(host: Pick<ThreadHost, 'settings' | 'projectPath'>) {
  return async (
    threadId: string,
    prepared: PreparedThread,
    recordPid: (pid: number) => Promise<void> | void,
  ): Promise<number> => {
    const request = {
      kind: 'directive' as const,
      project_path: host.projectPath,
      thread_id: threadId,
      directive_id: prepared.directive_id,
      inputs: prepared.inputs,
      prepared,
    };
    if (databaseUrl(host.settings) !== undefined) {
      await enqueueDirective(host, request);
      return 0;
    }
    const [{ launchDetached }, { ensureThreadDir, threadsStateRoot }] = await Promise.all([
      import('./detach.js'),
      import('@ryeos/threads'),
    ]);
    const directory = ensureThreadDir(threadsStateRoot(host.projectPath), threadId);
    return launchDetached(host.settings, request, directory, recordPid);
  };
}
