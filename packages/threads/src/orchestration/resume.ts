/**
 * `resume_thread` (spec threads §10.5, §10.6): a finished thread carries on with a new message,
 * in a new thread that continues its chain. The chain is followed to its last thread first, and a
 * thread still running (or only created) is refused.
 */

import { isRyeError } from '@ryeos/lillux';
import type { ThreadHost } from '../host.js';
import { threadDir, threadsStateRoot } from '../persistence/paths.js';
import { openProjectStore } from '../store/opener.js';
import type { ForkRequest, RunThread, ThreadResult } from '../thread-request.js';
import { verifiedRecord } from './continuation.js';

export interface ResumeRequest {
  threadId: string;
  message: string;
  model?: string;
  signal?: AbortSignal;
  /** `handoff_thread`: a continuation that says the old thread's context was full; no message needed. */
  handoff?: boolean;
  /**
   * The new thread's parent: by default the old thread's (when it still runs); a thread that
   * resumes one of its own makes the continuation its child.
   */
  parentThreadId?: string;
  /** Run the new thread detached (see `ForkRequest.detach`). */
  detach?: ForkRequest['detach'];
}

export interface ResumeResult {
  success: boolean;
  resumed: boolean;
  old_thread_id: string;
  /** The thread of the chain that was resumed (the last one), when it differs from the one asked. */
  resolved_thread_id?: string;
  new_thread_id?: string;
  directive?: string;
  new_thread_result?: ThreadResult;
  error?: string;
}

/** `resumeThread` with the thread runner handed in: the orchestrator inside a running thread calls it. */
export async function resumeWith(
  run: RunThread,
  host: ThreadHost,
  request: ResumeRequest,
): Promise<ResumeResult> {
  const store = await openProjectStore(host.projectPath, host.store);
  let terminal:
    | { thread_id: string; directive: string; status: string; parent_id: string | null }
    | undefined;
  try {
    const row = await store.registry.getThread(request.threadId);
    if (!row)
      return {
        success: false,
        resumed: false,
        old_thread_id: request.threadId,
        error: `Thread '${request.threadId}' not found`,
      };
    terminal = (await store.registry.getChain(request.threadId)).at(-1) ?? row;
  } finally {
    await store.close();
  }
  const base = {
    old_thread_id: request.threadId,
    ...(terminal.thread_id !== request.threadId ? { resolved_thread_id: terminal.thread_id } : {}),
    directive: terminal.directive,
  };
  if (terminal.status === 'running' || terminal.status === 'created') {
    return {
      success: false,
      resumed: false,
      ...base,
      error: `Thread '${terminal.thread_id}' is still ${terminal.status}: wait for it, or cancel it, before resuming`,
    };
  }
  if (!request.handoff && !request.message.trim()) {
    return {
      success: false,
      resumed: false,
      ...base,
      error: 'A resume needs a message: what should the thread do next?',
    };
  }
  // The registry is unsigned: the directive and parent the thread carries on under come from its
  // signed record, so an edited row cannot move the chain under a directive with wider grants.
  let signed: Awaited<ReturnType<typeof verifiedRecord>>;
  try {
    const stateRoot = threadsStateRoot(host.projectPath);
    signed = await verifiedRecord(
      threadDir(stateRoot, terminal.thread_id),
      terminal.thread_id,
      host.executor.trust,
      request.threadId,
    );
  } catch (error) {
    return {
      success: false,
      resumed: false,
      ...base,
      error: isRyeError(error) ? error.message : String(error),
    };
  }
  const parent = request.parentThreadId ?? signed.parent_thread_id;
  const result = await run(host, {
    directiveId: signed.directive,
    previousThreadId: terminal.thread_id,
    ...(request.message.trim() ? { continuationMessage: request.message } : {}),
    ...(request.handoff ? { handoff: true } : {}),
    ...(parent ? { parentThreadId: parent } : {}),
    ...(request.model ? { model: request.model } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.detach ? { detach: request.detach } : {}),
  });
  return {
    success: result.success,
    resumed: result.thread_id !== undefined && result.status !== 'error',
    ...base,
    directive: signed.directive,
    ...(result.thread_id ? { new_thread_id: result.thread_id } : {}),
    new_thread_result: result,
    ...(result.success ? {} : { error: result.error ?? 'The resumed thread failed' }),
  };
}
