/** `rye init [--project DIR] [--user-only]`: user space + key, and an example project `.ai/`. */

import type { RyeSettings } from '@ryeos/executor';
import { callerPath, parse, printJson, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { initWorkspace } from '../init.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function initCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values } = parse(
    args,
    {
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
      'user-only': { type: 'boolean' },
    },
    'init',
  );
  const rye = createRye({
    settings,
    projectPath: callerPath(str(values, 'project') ?? str(values, 'project-path') ?? '.'),
  });
  printJson(io, await initWorkspace(rye, { userOnly: values['user-only'] === true }));
  return 0;
}
