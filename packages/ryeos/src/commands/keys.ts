/** `rye keys generate [--force] | trust <public_key.pem> [--owner NAME] [--space user|project] | list` */
import { readFile } from 'node:fs/promises';
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';

export async function keysCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(args, {
    force: { type: 'boolean' },
    owner: { type: 'string' },
    space: { type: 'string' },
    project: { type: 'string' },
    'project-path': { type: 'string', short: 'p' },
  });
  const project = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({
    settings,
    projectPath: callerPath(project ?? '.'),
  });
  const [action, file] = positionals;
  if (action === 'generate') {
    printJson(io, { status: 'success', ...(await rye.generateKeys({ force: values.force === true })) });
    return 0;
  }
  if (action === 'trust') {
    if (!file)
      throw new RyeError('VALIDATION', 'rye keys trust needs a public key file', {
        hint: 'rye keys trust ./public_key.pem --owner alice',
      });
    const pem = await readFile(file, 'utf8');
    const space = values.space === 'project' ? 'project' : 'user';
    printJson(io, {
      status: 'success',
      ...(await rye.trustKey(pem, {
        space,
        ...(str(values, 'owner') ? { owner: str(values, 'owner')! } : {}),
      })),
    });
    return 0;
  }
  if (action === 'list') {
    printJson(io, { status: 'success', keys: await rye.listKeys() });
    return 0;
  }
  throw new RyeError('VALIDATION', `Unknown keys action '${action ?? ''}'`, {
    hint: 'Use rye keys generate | trust <file> | list',
  });
}
