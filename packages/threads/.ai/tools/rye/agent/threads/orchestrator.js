// rye:signed:2026-11-29T01:24:02Z:77630e08c352300a08712876b8c8551ff5478df5a70dfb6c10e116fb0f89757a:BHbj1DBW87QivKOXfbdlbeYBFxUAt71Ode5BjpI0xNgsYiQ7FkpgdFnEhQ5lDcEXYnrrRZIZcxAzcyQmE-XMDA==:007af625371e6e71
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
// No package.json beside this file: the nearest one is @ryeos/threads' own, so the package that
// ships this tool resolves by self-reference (installed alone or under ryeos).
import { orchestrate } from '@ryeos/threads';

/**
 * resume and handoff run a new thread, which needs the whole of ryeos (its tools come back through
 * execute): the thread runner does it, in a process of its own, and this call waits for it.
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

// The person or client calling this tool may act on any thread of the project (a thread's own
// model is answered by its runner instead, scoped to the threads it started).
export async function execute(params, context) {
  const project = context.project_path;
  return orchestrate(project, params, {
    continueThread: (threadId, message, handoff) =>
      runContinuation(project, handoff ? { kind: 'handoff', thread_id: threadId } : { kind: 'resume', thread_id: threadId, message }),
  });
}
