/**
 * `rye remote add <name> <url> [--key-env VAR] [--space user|project] | list | push | status |
 * threads | trust <name> [--replace]`, each with `--remote NAME` where it talks to a server.
 */
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, str } from '../cli/args.js';
import { closestWord } from '../cli/closest.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

const ACTIONS = ['add', 'list', 'push', 'status', 'threads', 'trust'];

export async function remoteCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      remote: { type: 'string' },
      'key-env': { type: 'string' },
      space: { type: 'string' },
      limit: { type: 'string' },
      replace: { type: 'boolean' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
    },
    'remote',
  );
  const project = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({ settings, projectPath: callerPath(project ?? '.'), spareRunner: false });
  const [action, ...rest] = positionals;
  const remote = str(values, 'remote');
  const named = remote ? { remote } : {};
  switch (action) {
    case 'add': {
      const [name, url] = rest;
      if (!name || !url) {
        throw new RyeError('VALIDATION', 'rye remote add needs a name and a url', {
          hint: 'rye remote add default http://127.0.0.1:8321 --key-env RYE_REMOTE_API_KEY',
        });
      }
      const space = str(values, 'space') ?? 'user';
      if (space !== 'user' && space !== 'project') {
        throw new RyeError('VALIDATION', `Unknown --space '${space}'. Must be user or project.`);
      }
      const keyEnv = str(values, 'key-env');
      printJson(io, {
        status: 'success',
        ...(await rye.addRemote(name, url, { space, ...(keyEnv ? { keyEnv } : {}) })),
      });
      return 0;
    }
    case 'trust': {
      const name = rest[0] ?? remote;
      printJson(io, {
        status: 'success',
        ...(await rye.remote('trust', {
          ...(name ? { remote: name } : {}),
          replace: values.replace === true,
        })),
      });
      return 0;
    }
    case 'list':
    case 'push':
    case 'status':
      printJson(io, { status: 'success', ...(await rye.remote(action, named)) });
      return 0;
    case 'threads': {
      const limit = str(values, 'limit');
      printJson(io, {
        status: 'success',
        ...(await rye.remote('threads', { ...named, ...(limit ? { limit: Number(limit) } : {}) })),
      });
      return 0;
    }
    default: {
      const guess = closestWord(action ?? '', ACTIONS);
      throw new RyeError('VALIDATION', `Unknown remote action '${action ?? ''}'`, {
        hint: `${guess ? `Did you mean rye remote ${guess}? ` : ''}Use rye remote add | list | push | status | threads | trust`,
      });
    }
  }
}
