// rye:signed:2026-11-27T17:14:08Z:f55e8022bfddf39097a9037babb6c607fe88b6de19d244edf1ee63267d6797ac:6owp1S07KIX6_bpsrvbb8_-WnYUUyBYDPc9qPH9oaM79JdSTTJF96ZoQJ35hg_0izLh2xWFQt0A5PrfWkeMmAw==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/agent/threads';
export const __tool_description__ =
  'Coordinate managed threads: wait for, cancel, kill, inspect, search and resume threads of this project (spec threads §10.5)';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    operation: {
      type: 'string',
      enum: [
        'wait_threads',
        'cancel_thread',
        'kill_thread',
        'get_status',
        'list_active',
        'aggregate_results',
        'get_chain',
        'chain_search',
        'read_transcript',
        'resume_thread',
        'handoff_thread',
      ],
      description: 'What to do',
    },
    thread_id: { type: 'string', description: 'The thread (cancel, kill, status, chain, search, transcript, resume, handoff)' },
    thread_ids: { type: 'array', items: { type: 'string' }, description: 'The threads (wait_threads, aggregate_results)' },
    timeout: { type: 'number', description: 'wait_threads: seconds to wait (default 600, at most 3600)' },
    query: { type: 'string', description: 'chain_search: what to look for' },
    search_type: { type: 'string', enum: ['text', 'regex'], description: 'chain_search: text (default) or regex' },
    max_results: { type: 'integer', minimum: 1, description: 'chain_search: at most this many hits (default 50)' },
    tail_lines: { type: 'integer', minimum: 1, description: 'read_transcript: only the last lines' },
    message: { type: 'string', description: 'resume_thread: what the thread should do next' },
  },
  required: ['operation'],
};
// wait_threads may wait up to an hour: the runtime's own limit (300 s) must not cut it short.
export const CONFIG = { timeout: 3660 };

import { spawn } from 'node:child_process';
import {
  aggregateResults,
  cancelThread,
  chainSearch,
  getChain,
  getThreadStatus,
  killThread,
  listActiveThreads,
  readKnowledgeTranscript,
  waitThreads,
} from '@ryeos/threads';

function need(params, key) {
  const value = params[key];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`${params.operation} needs ${key}`);
  return value;
}

function needList(params, key) {
  const value = params[key];
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')) {
    throw new Error(`${params.operation} needs ${key}: a list of thread ids`);
  }
  return value;
}

/**
 * resume and handoff run a new thread, which needs the whole of ryeos (its tools come back through
 * execute): the detached runner does it, in a process of its own, and this call waits for it.
 */
function runContinuation(projectPath, request) {
  const runner = process.env.RYE_THREAD_RUNNER;
  if (!runner) throw new Error('RYE_THREAD_RUNNER is not set: start ryeos through its CLI, MCP server or API');
  const node = process.env.RYE_KERNEL_NODE || process.execPath;
  return new Promise((resolve, reject) => {
    const child = spawn(node, [runner], { cwd: projectPath, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('close', () => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`The thread runner gave no result: ${err.trim().slice(-500) || line.slice(0, 500)}`));
      }
    });
    child.stdin.end(JSON.stringify({ project_path: projectPath, ...request }));
  });
}

export async function execute(params, context) {
  const project = context.project_path;
  switch (params.operation) {
    case 'wait_threads':
      return waitThreads(project, needList(params, 'thread_ids'), {
        timeoutSeconds: Math.min(Number(params.timeout ?? 600), 3600),
      });
    case 'cancel_thread':
      return cancelThread(project, need(params, 'thread_id'));
    case 'kill_thread':
      return killThread(project, need(params, 'thread_id'));
    case 'get_status':
      return getThreadStatus(project, need(params, 'thread_id'));
    case 'list_active':
      return listActiveThreads(project);
    case 'aggregate_results':
      return aggregateResults(project, needList(params, 'thread_ids'));
    case 'get_chain':
      return getChain(project, need(params, 'thread_id'));
    case 'chain_search':
      return chainSearch(project, need(params, 'thread_id'), need(params, 'query'), {
        searchType: params.search_type === 'regex' ? 'regex' : 'text',
        ...(params.max_results ? { maxResults: Number(params.max_results) } : {}),
      });
    case 'read_transcript':
      return readKnowledgeTranscript(project, need(params, 'thread_id'), {
        ...(params.tail_lines ? { tailLines: Number(params.tail_lines) } : {}),
      });
    case 'resume_thread':
      return runContinuation(project, {
        kind: 'resume',
        thread_id: need(params, 'thread_id'),
        message: need(params, 'message'),
      });
    case 'handoff_thread':
      return runContinuation(project, { kind: 'handoff', thread_id: need(params, 'thread_id') });
    default:
      throw new Error(
        `Unknown operation '${String(params.operation)}': use wait_threads, cancel_thread, kill_thread, get_status, list_active, aggregate_results, get_chain, chain_search, read_transcript, resume_thread or handoff_thread`,
      );
  }
}
