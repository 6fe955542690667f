/**
 * The commands of `ryeos-remote`. Every failure is one `ryeos-remote: …` line and its hint on
 * stderr with exit 1 (2 for a usage error), never a stack trace.
 */
import { parseArgs } from 'node:util';
import { isRyeError } from '@ryeos/lillux';
import { packageVersion } from 'ryeos';
import { ensurePrivateDirs, remotePaths } from './config.js';
import {
  createApiKey,
  deleteSecret,
  listApiKeys,
  listSecretNames,
  openRemoteDb,
  type RemoteDb,
  revokeApiKey,
  setSecret,
} from './db.js';
import type { CliIo } from './io.js';

export const USAGE = `Usage: ryeos-remote serve [--host 127.0.0.1] [--port 8321|0] [--data-dir D] [--name default]
                          [--allow-remote] [--max-request-bytes N] [--max-user-storage-bytes N]
                          [--max-run-seconds N] [--max-runs-per-user N] [--max-inflight-bytes N]
                          [--max-body-seconds N] [--max-connections-per-client N] [--run-pool N]
                          [--unconfined-runs]
       ryeos-remote keys create --user U [--name N] [--expires-days D]
       ryeos-remote keys list [--user U]
       ryeos-remote keys revoke <key-id>
       ryeos-remote secrets set --user U NAME      (the value is read from stdin)
       ryeos-remote secrets list --user U
       ryeos-remote secrets delete --user U NAME
Every command takes --data-dir D (default $RYE_REMOTE_HOME, else ~/.ryeos-remote).
Environment: RYE_REMOTE_HOME, CAS_BASE_PATH, SIGNING_KEY_DIR, RYE_REMOTE_NAME, MAX_REQUEST_BYTES,
MAX_USER_STORAGE_BYTES, MAX_RUN_SECONDS, MAX_RUNS_PER_USER, MAX_INFLIGHT_BYTES, MAX_BODY_SECONDS,
MAX_CONNECTIONS_PER_CLIENT, RUN_POOL.
`;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  name: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  'unconfined-runs': { type: 'boolean' },
  'max-request-bytes': { type: 'string' },
  'max-user-storage-bytes': { type: 'string' },
  'max-run-seconds': { type: 'string' },
  'max-runs-per-user': { type: 'string' },
  'max-inflight-bytes': { type: 'string' },
  'max-body-seconds': { type: 'string' },
  'max-connections-per-client': { type: 'string' },
  'run-pool': { type: 'string' },
  user: { type: 'string' },
  'expires-days': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

type Flags = { [K in keyof typeof FLAGS]?: (typeof FLAGS)[K]['type'] extends 'boolean' ? boolean : string };

class UsageError extends Error {}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} is required`);
  return value;
}

export async function runRemoteCli(argv: string[], io: CliIo): Promise<number> {
  let flags: Flags;
  let words: string[];
  try {
    const parsed = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
    flags = parsed.values as Flags;
    words = parsed.positionals;
  } catch (error) {
    io.stderr(`ryeos-remote: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (flags.version) {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  try {
    if (words[0] === 'serve') {
      const { serve } = await import('./serve.js');
      return await serve(flags, io);
    }
    return await manage(words, flags, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`ryeos-remote: ${error.message}\n${USAGE}`);
      return 2;
    }
    if (isRyeError(error)) {
      io.stderr(`ryeos-remote: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ''}`);
      return 1;
    }
    io.stderr(`ryeos-remote: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  }
}

function openDb(flags: Flags): RemoteDb {
  const paths = remotePaths({ dataDir: flags['data-dir'] }, process.env);
  ensurePrivateDirs(paths);
  return openRemoteDb(paths.dbPath);
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

async function manage(words: string[], flags: Flags, io: CliIo): Promise<number> {
  const [group, action, arg] = words;
  const known: Record<string, string[]> = {
    keys: ['create', 'list', 'revoke'],
    secrets: ['set', 'list', 'delete'],
  };
  if (!group || !known[group])
    throw new UsageError(group ? `unknown command '${group}'` : 'a command is required');
  if (!action || !known[group].includes(action)) {
    throw new UsageError(
      `${group} needs one of ${known[group].join(', ')}${action ? `, not '${action}'` : ''}`,
    );
  }
  // Read before the database opens, so a server is not held up by a slow stdin.
  const secretValue = group === 'secrets' && action === 'set' ? await io.stdin() : undefined;
  const db = openDb(flags);
  try {
    if (group === 'keys') return keysCommand(db, action, arg, flags, io);
    const user = need(flags.user, '--user');
    if (action === 'list') io.stdout(json(listSecretNames(db, user)));
    else if (action === 'set') {
      // One trailing newline is what `echo` adds, not part of the secret.
      setSecret(db, user, need(arg, 'NAME'), secretValue!.replace(/\r?\n$/, ''));
      io.stdout(json({ user, name: arg, set: true }));
    } else {
      deleteSecret(db, user, need(arg, 'NAME'));
      io.stdout(json({ user, name: arg, deleted: true }));
    }
    return 0;
  } finally {
    db.close();
  }
}

function keysCommand(db: RemoteDb, action: string, arg: string | undefined, flags: Flags, io: CliIo): number {
  if (action === 'create') {
    const days = flags['expires-days'];
    const created = createApiKey(db, {
      user: need(flags.user, '--user'),
      ...(flags.name ? { name: flags.name } : {}),
      ...(days !== undefined ? { expiresDays: Number(days) } : {}),
    });
    io.stdout(json(created));
    io.stderr('ryeos-remote: the key is shown this once; the server keeps only its SHA-256.\n');
  } else if (action === 'list') {
    io.stdout(json(listApiKeys(db, flags.user)));
  } else {
    io.stdout(json(revokeApiKey(db, need(arg, '<key-id>'))));
  }
  return 0;
}
