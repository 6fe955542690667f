/** `rye keys generate [--force] | trust <public_key.pem> [--owner NAME] [--space user|project] | list` */
import { readFile } from 'node:fs/promises';
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, str } from '../cli/args.js';
import { closestWord } from '../cli/closest.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function keysCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      force: { type: 'boolean' },
      owner: { type: 'string' },
      space: { type: 'string' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
    },
    'keys',
  );
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
    const space = str(values, 'space') ?? 'user';
    if (space !== 'user' && space !== 'project')
      throw new RyeError('VALIDATION', `Unknown --space '${space}'. Must be user or project.`, {
        hint: 'rye keys trust ./public_key.pem --space project',
      });
    const pem = await readPublicKey(file);
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
  const guess = closestWord(action ?? '', ['generate', 'trust', 'list']);
  throw new RyeError('VALIDATION', `Unknown keys action '${action ?? ''}'`, {
    hint: `${guess ? `Did you mean rye keys ${guess}? ` : ''}Use rye keys generate | trust <file> | list`,
  });
}

/** The text of a public key file the user named (relative to where they ran the command). */
async function readPublicKey(file: string): Promise<string> {
  const path = callerPath(file);
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'it does not exist'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    throw new RyeError('VALIDATION', `Cannot read the public key file ${path}: ${reason}`, {
      hint: "Pass the path of someone's public key (PEM), e.g. rye keys trust ./alice.pem --owner alice",
    });
  }
}
