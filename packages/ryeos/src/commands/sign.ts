/** `rye sign <ref | glob>... [--space project|user] [--project DIR]` (also `rye sign <type> <id>`) */
import { statSync } from 'node:fs';
import type { SignResult } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, refFromPositionals, str } from '../cli/args.js';
import type { CliIo } from '../cli/run.js';
import { signEnvelope } from '../operations.js';
import { createRye } from '../rye.js';

const KIND_WORDS = new Set(['tool', 'directive', 'knowledge', 'config']);

export async function signCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    space: { type: 'string' },
    project: { type: 'string' },
    'project-path': { type: 'string', short: 'p' },
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
  // One `<type> <id>` pair, or any number of refs/globs signed as one batch.
  // A positional naming an existing file is that exact file (`rye sign .ai/tools/acme/x.py`).
  const refs = KIND_WORDS.has(positionals[0] ?? '')
    ? [refFromPositionals(positionals, 'sign')]
    : positionals.map((ref) =>
        statSync(callerPath(ref), { throwIfNoEntry: false })?.isFile() ? callerPath(ref) : ref,
      );
  if (refs.length === 0) refFromPositionals(refs, 'sign');
  const result: SignResult = { signed: [], failed: [], summary: '' };
  for (const ref of refs) {
    const one = await rye.sign(ref, { space });
    result.signed.push(...one.signed);
    result.failed.push(...one.failed);
  }
  result.summary = `${result.signed.length} signed, ${result.failed.length} failed`;
  const envelope = signEnvelope(result);
  printJson(io, envelope);
  return result.failed.length ? 1 : 0;
}
