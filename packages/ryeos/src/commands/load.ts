/** `rye load <ref> [--from SPACE] [--to SPACE] [--project DIR]` (also `rye load <type> <id>`) */
import { callerPath, parse, printJson, refFromPositionals, str } from '../cli/args.js';
import type { CliIo } from '../cli/run.js';
import { createRye } from '../rye.js';

export async function loadCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    from: { type: 'string' },
    source: { type: 'string' },
    to: { type: 'string' },
    destination: { type: 'string' },
    project: { type: 'string' },
    'project-path': { type: 'string', short: 'p' },
  });
  const rye = createRye({
    projectPath: callerPath(str(values, 'project') ?? str(values, 'project-path') ?? '.'),
  });
  const source = str(values, 'from') ?? str(values, 'source');
  const destination = str(values, 'to') ?? str(values, 'destination');
  const result = await rye.load({
    item_id: refFromPositionals(positionals, 'load'),
    ...(source ? { source } : {}),
    ...(destination ? { destination } : {}),
  });
  printJson(io, result);
  return result.status === 'error' ? 1 : 0;
}
