/** `rye load <ref> [--from SPACE] [--to SPACE] [--project DIR]` (also `rye load <type> <id>`) */

import type { RyeSettings } from '@ryeos/executor';
import { asArguments, callerPath, parse, printResult, refFromPositionals, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import type { LoadRequest } from '../rye.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function loadCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      from: { type: 'string' },
      source: { type: 'string' },
      to: { type: 'string' },
      destination: { type: 'string' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
    },
    'load',
  );
  const rye = createRye({
    settings,
    projectPath: callerPath(str(values, 'project') ?? str(values, 'project-path') ?? '.'),
  });
  const source = str(values, 'from') ?? str(values, 'source');
  const destination = str(values, 'to') ?? str(values, 'destination');
  const result = await rye.load(
    asArguments<LoadRequest>({ item_id: refFromPositionals(positionals, 'load'), source, destination }),
  );
  printResult(io, result, 'load');
  return result.status === 'error' ? 1 : 0;
}
