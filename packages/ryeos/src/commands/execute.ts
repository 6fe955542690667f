/**
 * `rye execute <ref> [--params JSON | JSON on stdin] [--project DIR] [--dry-run] [--trace]
 *  [--thread inline|fork] [--target local|remote|remote:<name>] [--async] [--model M]
 *  [--limit-overrides JSON]`
 */

import {
  callerPath,
  parse,
  parseJsonObject,
  printJson,
  readStdin,
  refFromPositionals,
  str,
} from '../cli/args.js';
import type { CliIo } from '../cli/run.js';
import { createRye } from '../rye.js';

export async function executeCommand(args: string[], io: CliIo): Promise<number> {
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
  const rye = createRye({ projectPath: callerPath(projectPath ?? '.') });
  const result = await rye.execute({
    item_id: ref,
    parameters,
    ...(values['dry-run'] ? { dry_run: true } : {}),
    ...(values.trace ? { trace: true } : {}),
    ...(values.async ? { async: true } : {}),
    ...optional('thread', str(values, 'thread')),
    ...optional('target', str(values, 'target')),
    ...optional('model', str(values, 'model')),
    ...optional('item_type', str(values, 'item-type')),
    ...(str(values, 'limit-overrides')
      ? { limit_overrides: parseJsonObject(str(values, 'limit-overrides')!, '--limit-overrides') }
      : {}),
  });
  printJson(io, result);
  return result.status === 'error' ? 1 : 0;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
