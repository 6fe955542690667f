/**
 * The detached runner (spec threads §11): started by `execute(…, async: true)` in a session of
 * its own, it reads its request on stdin and runs it to the end, whatever happens to the process
 * that started it. A forked directive re-enters the thread its caller set up (registered, budget
 * reserved, `thread.json` signed) and runs its loop; an async tool runs through the same `execute`
 * and its result goes to the registry. What it prints goes to the thread's `spawn.log`.
 */
import { readFileSync } from 'node:fs';
import type { DetachedRequest } from './execute/detach.js';
import { createRye, type Rye } from './rye.js';
import { processSettings } from './settings.js';

function readRequest(): DetachedRequest {
  const text = readFileSync(0, 'utf8');
  const request = JSON.parse(text) as DetachedRequest;
  if (!request || typeof request !== 'object' || typeof request.thread_id !== 'string') {
    throw new Error('The runner expects a JSON request on stdin');
  }
  return request;
}

async function runTool(rye: Rye, request: Extract<DetachedRequest, { kind: 'tool' }>): Promise<number> {
  const result = await rye.execute({ item_id: request.item_id, parameters: request.parameters });
  const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
  const store = openThreadStore(threadsStateRoot(request.project_path));
  try {
    const ok = result.status !== 'error';
    store.registry.setResult(request.thread_id, {
      status: result.status,
      ...(ok ? { outputs: { data: (result as { data?: unknown }).data ?? null } } : {}),
      ...(ok ? {} : { error: String((result as { error?: unknown }).error ?? 'The tool failed') }),
      envelope: result,
    });
    store.registry.updateStatus(request.thread_id, ok ? 'completed' : 'error');
  } finally {
    store.close();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.status === 'error' ? 1 : 0;
}

async function runDirective(
  rye: Rye,
  request: Extract<DetachedRequest, { kind: 'directive' }>,
): Promise<number> {
  const { forkDirective } = await import('./execute/fork.js');
  // SIGTERM (kill's first signal) stops the thread cleanly, as Ctrl-C does in the CLI.
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  const result = await forkDirective(
    {
      settings: rye.settings,
      executor: () => rye.executor(),
      projectPath: rye.projectPath,
      dispatch: (call) => rye.dispatch(call),
    },
    {
      directiveId: request.directive_id,
      inputs: request.inputs,
      ...(request.model ? { model: request.model } : {}),
      ...(request.limit_overrides ? { limitOverrides: request.limit_overrides } : {}),
      ...(request.parent_thread_id ? { parentThreadId: request.parent_thread_id } : {}),
      preRegistered: request.thread_id,
      signal: stop.signal,
    },
    performance.now(),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.status === 'error' ? 1 : 0;
}

async function runContinuation(
  rye: Rye,
  request: Extract<DetachedRequest, { kind: 'resume' | 'handoff' }>,
): Promise<number> {
  const result = await rye.resumeThread(request.thread_id, request.message ?? '', {
    ...(request.kind === 'handoff' ? { handoff: true } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.success ? 0 : 1;
}

try {
  const request = readRequest();
  const rye = createRye({ projectPath: request.project_path, settings: processSettings() });
  process.exitCode =
    request.kind === 'tool'
      ? await runTool(rye, request)
      : request.kind === 'directive'
        ? await runDirective(rye, request)
        : await runContinuation(rye, request);
} catch (error) {
  process.stderr.write(`rye thread runner: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exitCode = 2;
}
