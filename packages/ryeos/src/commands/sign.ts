/** `rye sign <ref | glob> [--space project|user] [--project DIR]` */
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, refFromPositionals, str } from '../cli/args.js';
import type { CliIo } from '../cli/run.js';
import { signEnvelope } from '../operations.js';
import { createRye } from '../rye.js';

export async function signCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    space: { type: 'string' },
    project: { type: 'string' },
    'project-path': { type: 'string' },
  });
  const space = str(values, 'space') ?? 'project';
  if (space !== 'project' && space !== 'user') {
    throw new RyeError('PERMISSION', `Cannot sign in '${space}' space`, {
      hint:
        space === 'system'
          ? 'System items are immutable: copy the item to project space and sign it there.'
          : 'Use --space project or --space user.',
    });
  }
  const projectPath = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({ projectPath: callerPath(projectPath ?? '.') });
  const result = await rye.sign(refFromPositionals(positionals, 'sign'), { space });
  const envelope = signEnvelope(result);
  printJson(io, envelope);
  return result.failed.length ? 1 : 0;
}
