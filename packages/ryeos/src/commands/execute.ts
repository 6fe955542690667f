/**
 * `rye execute <ref> [--params JSON | --params - | JSON piped in] [--project DIR] [--dry-run] [--trace]
 *  [--thread inline|fork] [--target local|remote|remote:<name>] [--async] [--model M]
 *  [--limit-overrides JSON]`
 */

import type { RyeSettings } from '@ryeos/executor';
import { isSignableKind } from '@ryeos/executor';
import { closeWorkers } from '@ryeos/lillux';
import {
  asArguments,
  callerPath,
  PIPE_GRACE_MS,
  parse,
  parseJsonObject,
  pipedStdin,
  printResult,
  readStdin,
  refFromPositionals,
  str,
} from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { graphProgressRelay } from '../graphs/progress-relay.js';
import type { ExecuteRequest } from '../rye.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function executeCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      params: { type: 'string' },
      parameters: { type: 'string' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
      'dry-run': { type: 'boolean' },
      trace: { type: 'boolean' },
      thread: { type: 'string' },
      target: { type: 'string' },
      async: { type: 'boolean' },
      model: { type: 'string' },
      'limit-overrides': { type: 'string' },
      'item-type': { type: 'string' },
    },
    'execute',
  );
  const ref = refFromPositionals(positionals, 'execute');
  const raw = str(values, 'params') ?? str(values, 'parameters');
  let parameters: Record<string, unknown> = {};
  if (raw !== undefined) parameters = parseJsonObject(raw === '-' ? await readStdin() : raw, '--params');
  else {
    // The original's `<type> <id>` form read stdin whenever it was not a terminal; a ref reads
    // only what is already piped in, so an open pipe with nothing in it never hangs the command.
    const pair = positionals.length >= 2 && isSignableKind(positionals[0]!);
    const piped = pair ? (process.stdin.isTTY ? '' : await readStdin()) : await pipedStdin();
    if (piped === undefined) {
      io.stderr(
        `rye: stdin is an open pipe with nothing in it after ${PIPE_GRACE_MS} ms: running without parameters (pass --params - to wait for stdin, or --params '{}')\n`,
      );
    } else if (piped.trim()) parameters = parseJsonObject(piped.trim(), 'stdin');
  }
  const projectPath = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({
    settings,
    projectPath: callerPath(projectPath ?? '.'),
    // One call and the process ends: no spare runner for a next async fork.
    spareRunner: false,
  });
  const limits = str(values, 'limit-overrides');
  // Ctrl-C stops a managed thread cleanly (recorded as cancelled, budget released, records
  // signed); a second Ctrl-C ends the process at once.
  const stop = new AbortController();
  const onSignal = () => {
    io.stderr('rye: stopping (Ctrl-C again to quit at once)\n');
    stop.abort();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const result = await rye
    .execute(
      asArguments<ExecuteRequest>({
        item_id: ref,
        parameters,
        dry_run: values['dry-run'] === true || undefined,
        trace: values.trace === true || undefined,
        async: values.async === true || undefined,
        thread: str(values, 'thread'),
        target: str(values, 'target'),
        model: str(values, 'model'),
        item_type: str(values, 'item-type'),
        limit_overrides: limits === undefined ? undefined : parseJsonObject(limits, '--limit-overrides'),
        signal: stop.signal,
        onOutput: graphProgressRelay((line) => io.stderr(line)),
      }),
      // One call and the process ends: a function-style tool runs on a thread of this process
      // (booted at start-up, cli/run.ts) rather than in a second process.
      { workerThread: true },
    )
    .finally(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
  printResult(io, result, 'execute');
  // A tool run is over once answered (an --async one runs detached). What it leaves is its warm
  // worker, stopped now: a tool on a thread of this process could otherwise go on starting
  // programs until the process ends; stopping it kills what it left. The process then ends at
  // once, without waiting for the worker's teardown (~7 ms). (A directive's thread may still be
  // writing: that path ends as usual.)
  if (result.type === 'tool') {
    void closeWorkers();
    io.nothingLeftToRun?.();
  } else if (result.type === 'directive') {
    // A thread's palette workers (started with it, or by its calls) end with this one-shot run:
    // an imported tool's module code must not go on after the CLI has answered.
    void closeWorkers();
  }
  return result.status === 'error' ? 1 : 0;
}
