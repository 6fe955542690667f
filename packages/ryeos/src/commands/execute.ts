/**
 * `rye execute <ref> [--params JSON | JSON on stdin] [--project DIR] [--dry-run] [--trace]
 *  [--thread inline|fork] [--target local|remote|remote:<name>] [--async] [--model M]
 *  [--limit-overrides JSON]`
 */

import type { RyeSettings } from '@ryeos/executor';
import {
  asArguments,
  callerPath,
  parse,
  parseJsonObject,
  printJson,
  readStdin,
  refFromPositionals,
  str,
} from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import type { ExecuteRequest } from '../rye.js';
import { createRye } from '../rye.js';

export async function executeCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(args, {
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
  });
  const ref = refFromPositionals(positionals, 'execute');
  const raw = str(values, 'params') ?? str(values, 'parameters');
  let parameters: Record<string, unknown> = {};
  if (raw !== undefined) parameters = parseJsonObject(raw === '-' ? await readStdin() : raw, '--params');
  else if (!process.stdin.isTTY) {
    const piped = (await readStdin()).trim();
    if (piped) parameters = parseJsonObject(piped, 'stdin');
  }
  const projectPath = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({
    settings,
    projectPath: callerPath(projectPath ?? '.'),
  });
  const limits = str(values, 'limit-overrides');
  const result = await rye.execute(
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
    }),
  );
  printJson(io, result);
  return result.status === 'error' ? 1 : 0;
}
