/**
 * The orchestrator's operations (spec threads §10.5), for both of its callers.
 *
 * `orchestrate` serves the signed tool `rye/agent/threads/orchestrator`, run by a person or an
 * MCP client, who may act on any thread of the project. `orchestrateFor` serves a model inside a
 * thread: it may act only on the threads it started — its descendants and their continuations —
 * and whatever it resumes becomes its own child: limited, attenuated and paid for by it. The
 * runner answers those calls itself, in-process, through it.
 */
import { RyeError, toRyeError } from '@ryeos/lillux';
import type { ThreadHost } from '../host.js';
import { openProjectStore, type ThreadStoreOpener } from '../store/opener.js';
import type { RunThread } from '../thread-request.js';
import { DEFAULT_CONTINUATION_MESSAGE } from './continuation.js';
import { cancelThread, descendantsOf, killThread } from './control.js';
import { aggregateResults, chainSearch, getChain, getStatus, listActive, readTranscript } from './query.js';
import { resumeWith } from './resume.js';
import { waitThreads } from './wait.js';

export interface OrchestrateOptions {
  /** Throws when the caller may not act on these threads (default: any thread may be named). */
  checkScope?: (ids: readonly string[]) => void;
  /** Keeps, of the active threads, those the caller may see (default: all). */
  visible?: (threadId: string) => boolean;
  /** `resume_thread` / `handoff_thread` of a finished thread: runs the continuation. */
  continueThread: (threadId: string, message: string, handoff: boolean) => Promise<Record<string, unknown>>;
  signal?: AbortSignal;
  /** Opens the project's thread store; default SQLite. */
  store?: ThreadStoreOpener;
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

/** One orchestrator call; never throws (a failure is `{success: false, error, error_type}`). */
export async function orchestrate(
  projectPath: string,
  params: Record<string, unknown>,
  options: OrchestrateOptions,
): Promise<Record<string, unknown>> {
  const { checkScope = () => undefined, visible = () => true, signal } = options;
  const store = options.store ? { store: options.store } : {};
  const one = (key = 'thread_id') => {
    const id = text(params, key);
    checkScope([id]);
    return id;
  };
  const many = (key = 'thread_ids') => {
    const ids = list(params, key);
    checkScope(ids);
    return ids;
  };
  try {
    switch (params.operation) {
      case 'wait_threads': {
        const ids = many();
        const timeout = Math.min(Number(params.timeout ?? 600), 3600);
        return {
          ...(await waitThreads(projectPath, ids, {
            timeoutSeconds: timeout,
            ...(signal ? { signal } : {}),
            ...store,
          })),
        };
      }
      case 'aggregate_results':
        return { ...(await aggregateResults(projectPath, many(), store)) };
      case 'list_active': {
        const active = (await listActive(projectPath, store)).active_threads.filter((t) =>
          visible(t.thread_id),
        );
        return { success: true, active_threads: active, count: active.length };
      }
      case 'get_status':
        return { ...(await getStatus(projectPath, one(), store)) };
      case 'get_chain':
        return { ...(await getChain(projectPath, one(), store)) };
      case 'cancel_thread':
        return { ...(await cancelThread(projectPath, one(), store)) };
      case 'kill_thread':
        return { ...(await killThread(projectPath, one(), store)) };
      case 'chain_search':
        return {
          ...(await chainSearch(projectPath, one(), text(params, 'query'), {
            searchType: params.search_type === 'regex' ? 'regex' : 'text',
            ...(params.max_results ? { maxResults: Number(params.max_results) } : {}),
            ...store,
          })),
        };
      case 'read_transcript':
        return {
          ...(await readTranscript(projectPath, one(), {
            ...(params.tail_lines ? { tailLines: Number(params.tail_lines) } : {}),
          })),
        };
      case 'resume_thread':
        return await options.continueThread(one(), text(params, 'message'), false);
      case 'handoff_thread':
        return await options.continueThread(one(), '', true);
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

/** One orchestrator call made by the model of thread `callerId`, scoped to what it started. */
export async function orchestrateFor(
  host: ThreadHost,
  callerId: string,
  params: Record<string, unknown>,
  run: RunThread,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const store = await openProjectStore(host.projectPath, host.store);
  let scope: Set<string>;
  try {
    scope = new Set(await descendantsOf(store, callerId));
  } finally {
    await store.close();
  }
  return orchestrate(host.projectPath, params, {
    ...(host.store ? { store: host.store } : {}),
    checkScope: (ids) => {
      const outside = ids.filter((id) => !scope.has(id));
      if (outside.length) {
        throw new RyeError(
          'PERMISSION',
          `Thread ${callerId} may only act on the threads it started; not on ${outside.join(', ')}`,
        );
      }
    },
    visible: (id) => scope.has(id),
    // The continuation is the caller's child, a handoff included: counted and paid for by it.
    continueThread: async (threadId, message, handoff) => ({
      ...(await resumeWith(run, host, {
        threadId,
        message: message || (handoff ? DEFAULT_CONTINUATION_MESSAGE : ''),
        parentThreadId: callerId,
        ...(signal ? { signal } : {}),
      })),
    }),
    ...(signal ? { signal } : {}),
  });
}
