/**
 * A forked directive a managed thread runs on a remote is that thread's child: admitted (spawn,
 * time, budget) before anything is sent, its limits capped by what the thread has left, and the
 * spend the server reports charged to the thread when it ends.
 */
import { randomUUID } from 'node:crypto';
import type { Envelope, Executor } from '@ryeos/executor';
import type { RemoteTargetRequest } from './remote-request.js';

interface RemoteRunData {
  status?: unknown;
  thread_id?: unknown;
  result?: { cost?: { spend?: unknown } };
}

export async function runAsChild(
  host: { projectPath: string; executor: Executor },
  parentThreadId: string,
  request: RemoteTargetRequest,
  run: (limited: RemoteTargetRequest, signal?: AbortSignal) => Promise<Envelope>,
): Promise<Envelope> {
  const { admitRemoteRun, openThreadStore, settleRemoteRun, threadsStateRoot } = await import(
    '@ryeos/threads'
  );
  const store = openThreadStore(threadsStateRoot(host.projectPath));
  // The ledger row of the run; the server's own thread id is known only once it answers.
  const childId = `remote-${randomUUID()}`;
  let outcome: 'completed' | 'error' | 'cancelled' = 'error';
  let reported: unknown;
  try {
    const admission = await admitRemoteRun({
      store,
      projectPath: host.projectPath,
      parentThreadId,
      childId,
      trust: host.executor.trust,
      ...(request.limitOverrides ? { limitOverrides: request.limitOverrides } : {}),
      ...(request.directiveLimits ? { directiveLimits: request.directiveLimits } : {}),
    });
    const signal = withDeadline(request.signal, admission.deadline);
    try {
      const envelope = await run({ ...request, limitOverrides: admission.limitOverrides }, signal.signal);
      const data = (envelope as { data?: RemoteRunData }).data;
      // A run the server never started (refused push, unreachable) cost nothing there.
      reported = data?.thread_id ? data.result?.cost?.spend : 0;
      const failed = envelope.status === 'error' || data?.status === 'error';
      outcome = signal.signal?.aborted ? 'cancelled' : failed ? 'error' : 'completed';
      return envelope;
    } finally {
      signal.dispose();
      await settleRemoteRun(store, childId, reported, outcome);
    }
  } finally {
    await store.close();
  }
}

/** The caller's signal, also aborted when the parent's duration ends. */
function withDeadline(
  signal: AbortSignal | undefined,
  deadline: number,
): { signal: AbortSignal | undefined; dispose(): void } {
  if (!Number.isFinite(deadline)) return { signal, dispose: () => undefined };
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error("the thread's duration limit was reached")),
    Math.min(Math.max(0, deadline - Date.now()), 2_147_483_647),
  );
  timer.unref();
  const signals = signal ? [signal, controller.signal] : [controller.signal];
  return { signal: AbortSignal.any(signals), dispose: () => clearTimeout(timer) };
}
