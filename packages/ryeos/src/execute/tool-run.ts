/**
 * An async tool run carried out, wherever it runs: the detached runner (SQLite) and `rye worker`
 * (PostgreSQL) both run one through here. The tool goes through the same `execute` as any call
 * (its chain verified again here), watched for the reasons it must stop (a cancel, its thread's
 * line ending, its thread's deadline), and its result is written to its registry row.
 */
import type { Envelope } from '@ryeos/executor';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { ThreadStoreOpener } from '@ryeos/threads';
import type { ExecuteRequest, Rye } from '../rye.js';
import type { DetachedRequest, RemoteRun } from './detach.js';

export type ToolRunRequest = Extract<DetachedRequest, { kind: 'tool' }>;

export interface ToolRunOptions {
  /** The project's thread store; default its SQLite store. */
  store?: ThreadStoreOpener;
  /** Host variables the tool must not inherit (a thread's provider credentials). */
  withheldEnv?: readonly string[];
  /**
   * Told once the run must stop (its abort already sent), with the function that records it as
   * stopped: a process that must not wait for a tool that ignores the abort records and exits.
   */
  onStopping?: (reason: string, recordStopped: () => Promise<void>) => void;
  /** Handed the run's stop, for a stop from outside (the runner's SIGTERM). */
  stopWith?: (stop: (reason: string) => void) => void;
}

export interface ToolRunOutcome {
  envelope: Envelope;
  /** Why it was stopped, when it was. */
  stopped?: string;
}

export async function runToolRun(
  rye: Rye,
  request: ToolRunRequest,
  options: ToolRunOptions = {},
): Promise<ToolRunOutcome> {
  const { openProjectStore, settleRemoteRun, watchToolRun } = await import('@ryeos/threads');
  const openStore = () => openProjectStore(request.project_path, options.store);
  const recordStopped = async (reason: string) => {
    const store = await openStore();
    try {
      // A stopped run's reservation ends too; what the server spent is not known, so all of it is charged.
      await settleRemoteRun(store, request.thread_id, undefined, 'cancelled');
      if ((await store.registry.getThread(request.thread_id))?.status !== 'running') return;
      await store.registry.setResult(request.thread_id, {
        status: 'cancelled',
        error: `Tool run stopped: ${reason}`,
      });
      await store.registry.updateStatus(request.thread_id, 'cancelled');
    } finally {
      await store.close();
    }
  };
  const abort = new AbortController();
  let stopped: string | undefined;
  const stop = (reason: string) => {
    if (stopped) return;
    stopped = reason;
    abort.abort();
    options.onStopping?.(reason, () => recordStopped(reason));
  };
  options.stopWith?.(stop);
  const unwatch = watchToolRun({
    projectPath: request.project_path,
    threadId: request.thread_id,
    ...(request.parent_thread_id ? { parentThreadId: request.parent_thread_id } : {}),
    ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
    ...(options.store ? { store: options.store } : {}),
    stop,
  });
  if (stopped) {
    // Cancelled (or its thread ended) before it started: the tool never runs.
    unwatch();
    await recordStopped(stopped);
    const envelope = toErrorEnvelope(new RyeError('EXECUTION', `Tool run stopped: ${stopped}`), {
      type: 'tool',
      item_id: request.item_id,
    });
    return { envelope, stopped };
  }
  const { remote } = request;
  const envelope = await rye
    .execute(
      {
        item_id: remote?.item_id ?? request.item_id,
        parameters: request.parameters,
        signal: abort.signal,
        ...(remote ? remoteOptions(remote) : {}),
      },
      options.withheldEnv?.length ? { withheldEnv: options.withheldEnv } : {},
    )
    .finally(unwatch);
  if (stopped) {
    await recordStopped(stopped);
    return { envelope, stopped };
  }
  const store = await openStore();
  try {
    const ok = envelope.status !== 'error';
    // A thread's remote fork was reserved from its spend at launch: charged what the server reported.
    if (remote?.thread === 'fork' && request.parent_thread_id) {
      const cost = (envelope as { result?: { cost?: { spend?: unknown } } }).result?.cost;
      await settleRemoteRun(store, request.thread_id, cost?.spend, ok ? 'completed' : 'error');
    }
    await store.registry.setResult(request.thread_id, {
      status: envelope.status,
      ...(ok ? { outputs: { data: runData(envelope) } } : {}),
      ...(ok ? {} : { error: String((envelope as { error?: unknown }).error ?? 'The tool failed') }),
      envelope,
      // The server's own id of the run, for `rye remote threads` and the operator.
      ...(remote && typeof envelope.thread_id === 'string' ? { remote_thread_id: envelope.thread_id } : {}),
    });
    await store.registry.updateStatus(request.thread_id, ok ? 'completed' : 'error');
  } finally {
    await store.close();
  }
  return { envelope };
}

/** What a run answered: a tool's data, a remote run's result. */
function runData(result: Record<string, unknown>): unknown {
  return result.data ?? (result.execution_mode === 'remote' ? result.result : undefined) ?? null;
}

/** The execute options of an async remote run (the runner makes the same call, synchronously). */
function remoteOptions(remote: RemoteRun): Partial<ExecuteRequest> {
  return {
    target: remote.target,
    ...(remote.thread === 'fork' ? { thread: 'fork' as const } : {}),
    ...(remote.model ? { model: remote.model } : {}),
    ...(remote.limit_overrides ? { limit_overrides: remote.limit_overrides } : {}),
  };
}
