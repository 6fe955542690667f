/**
 * The detached runner (spec threads §11): started by `execute(…, async: true)` in a session of
 * its own, it reads its request on stdin and runs it to the end, whatever happens to the process
 * that started it. A forked directive runs the loop of the thread its caller set up (registered,
 * budget reserved, `thread.json` signed), from the setup handed over on stdin; an async tool runs
 * through the same `execute` and its result goes to the registry. What it prints goes to the
 * thread's `spawn.log`.
 */
import { realpathSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { flushTracing, toErrorEnvelope } from '@ryeos/lillux';
import type { PreparedThread } from '@ryeos/threads';
import { type DetachedRequest, keepSpareRunner, PENDING_LOG_FLAG } from './execute/detach.js';
import { createRye, type Rye } from './rye.js';
import { processSettings } from './settings.js';

async function readRequest(): Promise<DetachedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) {
    removePendingLog();
    throw new Error('No request on stdin (its caller gave up on it)');
  }
  const request = JSON.parse(text) as DetachedRequest;
  if (!request || typeof request !== 'object' || typeof request.thread_id !== 'string') {
    throw new Error('The runner expects a JSON request on stdin');
  }
  return request;
}

/** How long a stopped tool has to end (its process tree is killed on the abort) before the runner exits. */
const TOOL_STOP_GRACE_MS = 5000;

async function runTool(rye: Rye, request: Extract<DetachedRequest, { kind: 'tool' }>): Promise<number> {
  const { runToolRun } = await import('./execute/tool-run.js');
  const { envelope, stopped } = await runToolRun(rye, request, {
    // A thread's run stops with its thread: cancelled, failed, killed, or out of time.
    stopWith: (stop) => process.once('SIGTERM', () => stop('the tool run was killed')),
    // A tool that does not end on the abort does not keep its run alive past the grace.
    // The record is written (awaited) before the exit, whatever the store; a failure still exits.
    onStopping: (_reason, recordStopped) => {
      setTimeout(() => {
        recordStopped()
          .catch(() => undefined)
          .finally(() => process.exit(1));
      }, TOOL_STOP_GRACE_MS).unref();
    },
  });
  process.stdout.write(`${JSON.stringify(envelope)}\n`);
  return stopped || envelope.status === 'error' ? 1 : 0;
}

async function runDirective(
  rye: Rye,
  request: Extract<DetachedRequest, { kind: 'directive' }>,
): Promise<number> {
  const [
    { abandonThread, adoptParsed, mayStartChildren, parsePreparedThread, runPreparedThread },
    { forkHost },
  ] = await Promise.all([import('@ryeos/threads'), import('./execute/fork.js')]);
  // The setup arrived as JSON from another process: checked here, where it enters, before it runs.
  let prepared: PreparedThread;
  try {
    prepared = parsePreparedThread(request.prepared, request.thread_id);
  } catch (error) {
    const failure = toErrorEnvelope(error);
    await abandonThread(request.project_path, request.thread_id, failure.error);
    const { status: _status, ...reason } = failure;
    process.stdout.write(
      `${JSON.stringify({ success: false, status: 'error', thread_id: request.thread_id, directive: request.directive_id, cost: NO_COST, ...reason })}\n`,
    );
    return 1;
  }
  // For the children it sets up here: what its caller parsed is not parsed again (still verified),
  // and a runner is ready for the first (it ends with this process, or unused after a minute).
  adoptParsed(request.parsed);
  if (mayStartChildren(prepared)) keepSpareRunner(rye.settings, rye.projectPath);
  // SIGTERM (kill's first signal) stops the thread cleanly, as Ctrl-C does in the CLI.
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  // No store opener: the run uses the SQLite store its parent registered and reserved it in.
  const host = forkHost(rye.settings, rye.projectPath, rye.threadDispatch(), await rye.executor());
  const result = await runPreparedThread(host, prepared, {
    threadId: request.thread_id,
    signal: stop.signal,
    ...(typeof request.trace_parent === 'string' ? { traceParent: request.trace_parent } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.success ? 0 : 1;
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

const NO_COST = { turns: 0, input_tokens: 0, output_tokens: 0, spend: 0, elapsed_seconds: 0 };

/**
 * A runner started before its thread (`startRunnerEarly`) logs to `.runner-<uuid>.log` until its
 * caller moves the log into the thread's folder; one that gets no thread removes it. Only that
 * file: a pending log of this project's thread state folder, named as its caller names them.
 */
function removePendingLog(): void {
  const at = process.argv.indexOf(PENDING_LOG_FLAG);
  const path = at === -1 ? undefined : process.argv[at + 1];
  if (!path) return;
  if (!/^\.runner-[0-9a-f-]{36}\.log$/.test(basename(path))) return;
  try {
    if (realpathSync(dirname(path)) !== realpathSync(join(process.cwd(), '.ai', 'state', 'threads'))) return;
    rmSync(path, { force: true });
  } catch {
    // Nothing to remove.
  }
}

/**
 * What every run needs, loaded while the request is still coming: a forked directive's caller
 * starts this process before it sets the thread up, so this overlaps its work.
 */
async function warmUp(): Promise<void> {
  const threads = await import('@ryeos/threads');
  await import('./execute/fork.js');
  threads.loadStoreDriver();
  // Node loads its fetch implementation on first use of the global.
  void globalThis.fetch;
}

let request: DetachedRequest | undefined;
try {
  const warm = warmUp();
  // Awaited below; until then a failure must not end the process as an unhandled rejection.
  warm.catch(() => undefined);
  request = await readRequest();
  await warm;
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
  // Its caller said "running": a thread that did not get going says why, and pays nothing.
  if (request?.kind === 'directive' || request?.kind === 'tool') {
    const { abandonThread } = await import('@ryeos/threads');
    await abandonThread(
      request.project_path,
      request.thread_id,
      `The detached runner failed: ${(error as Error)?.message ?? String(error)}`,
    );
  }
}
// The spans an OTLP export still buffers go out before the process ends (nothing when unused).
await flushTracing();
