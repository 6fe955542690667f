/** `rye sign <ref | glob>... [--space project|user] [--project DIR]` (also `rye sign <type> <id>`) */
import { statSync } from 'node:fs';
import type { RyeSettings } from '@ryeos/executor';
import { isSignableKind } from '@ryeos/executor';
import { callerPath, parse, printResult, refFromPositionals, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';
import { signedAll } from '../sign.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function signCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      space: { type: 'string' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
    },
    'sign',
  );
  const space = str(values, 'space');
  const projectPath = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({
    settings,
    projectPath: callerPath(projectPath ?? '.'),
  });
  // One `<type> <id>` pair, or any number of refs/globs signed as one batch.
  // A positional naming an existing file is that exact file (`rye sign .ai/tools/acme/x.py`).
  const refs = isSignableKind(positionals[0] ?? '')
    ? [refFromPositionals(positionals, 'sign')]
    : positionals.map((ref) =>
        statSync(callerPath(ref), { throwIfNoEntry: false })?.isFile() ? callerPath(ref) : ref,
      );
  if (refs.length === 0) refFromPositionals(refs, 'sign');
  const envelope = await rye.sign(refs, space ? { space } : {});
  printResult(io, envelope, 'sign');
  // 0 when every item was signed; a batch with failures exits 1 like an error.
  return signedAll(envelope) ? 0 : 1;
}
