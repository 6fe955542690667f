/**
 * The orchestrator (spec threads §10.5) as a thread's model reaches it. The signed tool
 * `rye/agent/threads/orchestrator` serves a person or an MCP client, who may act on any thread
 * of the project; a model inside a thread may act only on the threads it started — its
 * descendants and their continuations — and whatever it resumes becomes its own child: limited,
 * attenuated and paid for by it. So the runner answers these calls itself, here.
 */
import { RyeError, toRyeError } from '@ryeos/lillux';
import type { ThreadHost } from '../host.js';
import { threadsStateRoot } from '../persistence/paths.js';
import { openThreadStore } from '../store/index.js';
import { runThread } from '../thread.js';
import { cancelThread, killThread } from './control.js';
import { aggregateResults, chainSearch, getChain, getStatus, listActive, readTranscript } from './query.js';
import { waitThreads } from './wait.js';

export const ORCHESTRATOR_ID = 'rye/agent/threads/orchestrator';

/** The threads `callerId` started: its descendants and every thread of their chains. */
function scopeOf(projectPath: string, callerId: string): Set<string> {
  const store = openThreadStore(threadsStateRoot(projectPath));
  try {
    const scope = new Set<string>();
    const queue = store.registry.listChildren(callerId).map((row) => row.thread_id);
    while (queue.length) {
      const id = queue.shift()!;
      if (scope.has(id)) continue;
      scope.add(id);
      for (const row of store.registry.getChain(id)) if (!scope.has(row.thread_id)) queue.push(row.thread_id);
      for (const child of store.registry.listChildren(id)) queue.push(child.thread_id);
    }
    scope.delete(callerId);
    return scope;
  } finally {
    store.close();
  }
}

function text(params: Record<string, unknown>, key: string): string {
  const value = params[key];
  if (typeof value !== 'string' || !value.trim()) {
    throw new RyeError('VALIDATION', `${String(params.operation)} needs ${key}`);
  }
  return value;
}

function list(params: Record<string, unknown>, key: string): string[] {
  const value = params[key];
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')) {
    throw new RyeError('VALIDATION', `${String(params.operation)} needs ${key}: a list of thread ids`);
  }
  return value as string[];
}

function within(scope: Set<string>, ids: readonly string[], callerId: string): void {
  const outside = ids.filter((id) => !scope.has(id));
  if (outside.length) {
    throw new RyeError(
      'PERMISSION',
      `Thread ${callerId} may only act on the threads it started; not on ${outside.join(', ')}`,
    );
  }
}

/** One orchestrator call made by the model of thread `callerId`; never throws. */
export async function orchestrateFor(
  host: ThreadHost,
  callerId: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const project = host.projectPath;
  try {
    const scope = scopeOf(project, callerId);
    const one = (key = 'thread_id') => {
      const id = text(params, key);
      within(scope, [id], callerId);
      return id;
    };
    switch (params.operation) {
      case 'wait_threads': {
        const ids = list(params, 'thread_ids');
        within(scope, ids, callerId);
        const timeout = Math.min(Number(params.timeout ?? 600), 3600);
        return {
          ...(await waitThreads(project, ids, { timeoutSeconds: timeout, ...(signal ? { signal } : {}) })),
        };
      }
      case 'aggregate_results': {
        const ids = list(params, 'thread_ids');
        within(scope, ids, callerId);
        return { ...aggregateResults(project, ids) };
      }
      case 'list_active': {
        const all = listActive(project);
        const mine = all.active_threads.filter((t) => scope.has(t.thread_id));
        return { success: true, active_threads: mine, count: mine.length };
      }
      case 'get_status':
        return { ...getStatus(project, one()) };
      case 'get_chain':
        return { ...getChain(project, one()) };
      case 'cancel_thread':
        return { ...cancelThread(project, one()) };
      case 'kill_thread':
        return { ...(await killThread(project, one())) };
      case 'chain_search':
        return {
          ...(await chainSearch(project, one(), text(params, 'query'), {
            searchType: params.search_type === 'regex' ? 'regex' : 'text',
            ...(params.max_results ? { maxResults: Number(params.max_results) } : {}),
          })),
        };
      case 'read_transcript':
        return {
          ...(await readTranscript(project, one(), {
            ...(params.tail_lines ? { tailLines: Number(params.tail_lines) } : {}),
          })),
        };
      case 'resume_thread':
      case 'handoff_thread':
        return await continueChild(host, callerId, one(), params, signal);
      default:
        throw new RyeError(
          'VALIDATION',
          `Unknown operation '${String(params.operation)}': use wait_threads, cancel_thread, kill_thread, get_status, list_active, aggregate_results, get_chain, chain_search, read_transcript, resume_thread or handoff_thread`,
        );
    }
  } catch (error) {
    const failure = toRyeError(error);
    return { success: false, error: failure.message, error_type: failure.code.toLowerCase() };
  }
}

/** resume/handoff from inside a thread: the continuation is the caller's child. */
async function continueChild(
  host: ThreadHost,
  callerId: string,
  threadId: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const store = openThreadStore(threadsStateRoot(host.projectPath));
  let terminal: { thread_id: string; directive: string; status: string };
  try {
    const row = store.registry.getThread(threadId);
    if (!row) return { success: false, error: `Thread '${threadId}' not found` };
    terminal = store.registry.getChain(threadId).at(-1) ?? row;
  } finally {
    store.close();
  }
  if (terminal.status === 'running' || terminal.status === 'created') {
    return { success: false, error: `Thread '${terminal.thread_id}' is still ${terminal.status}` };
  }
  const handoff = params.operation === 'handoff_thread';
  const message = typeof params.message === 'string' ? params.message : '';
  if (!handoff && !message.trim()) return { success: false, error: 'resume_thread needs a message' };
  const result = await runThread(host, {
    directiveId: terminal.directive,
    previousThreadId: terminal.thread_id,
    parentThreadId: callerId,
    ...(message.trim() ? { continuationMessage: message } : {}),
    ...(signal ? { signal } : {}),
  });
  return {
    success: result.success,
    resumed: result.thread_id !== undefined && result.status !== 'error',
    old_thread_id: threadId,
    ...(terminal.thread_id !== threadId ? { resolved_thread_id: terminal.thread_id } : {}),
    ...(result.thread_id ? { new_thread_id: result.thread_id } : {}),
    directive: terminal.directive,
    new_thread_result: result,
    ...(result.success ? {} : { error: result.error ?? 'The continuation failed' }),
  };
}
