/**
 * Where the server keeps its state and what it allows: from flags first, then the environment
 * variables of its deployment, then defaults. The data dir is private (0700).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_USER_STORAGE_BYTES } from 'ryeos';

export interface RemotePaths {
  dataDir: string;
  /** Users' stores: `<casBase>/<user id>/.ai/state/objects`. */
  casBase: string;
  /** The server's Ed25519 identity. */
  signingKeyDir: string;
  dbPath: string;
  /** Each execution's private temp spaces, removed when it ends. */
  runsDir: string;
}

export interface RemoteLimits {
  maxRequestBytes: number;
  maxUserStorageBytes: number;
}

type Env = Readonly<Record<string, string | undefined>>;

export function remotePaths(flags: { dataDir?: string | undefined }, env: Env): RemotePaths {
  const dataDir = resolve(flags.dataDir ?? (env.RYE_REMOTE_HOME || join(homedir(), '.ryeos-remote')));
  return {
    dataDir,
    casBase: resolve(env.CAS_BASE_PATH || join(dataDir, 'cas')),
    signingKeyDir: resolve(env.SIGNING_KEY_DIR || join(dataDir, 'signing')),
    dbPath: join(dataDir, 'remote.db'),
    runsDir: join(dataDir, 'runs'),
  };
}

/** Makes the data dir and the store base, private to the server's account. */
export function ensurePrivateDirs(paths: RemotePaths): void {
  for (const dir of [paths.dataDir, paths.casBase, paths.runsDir]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
}

export function byteLimit(
  name: string,
  flag: string | undefined,
  envValue: string | undefined,
  fallback: number,
) {
  const text = flag ?? (envValue || undefined);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RyeError('VALIDATION', `${name} must be a positive whole number of bytes, got '${text}'`, {
      hint: `Pass a byte count such as ${fallback}.`,
    });
  }
  return value;
}

export function remoteLimits(
  flags: { maxRequestBytes?: string | undefined; maxUserStorageBytes?: string | undefined },
  env: Env,
): RemoteLimits {
  return {
    maxRequestBytes: byteLimit(
      '--max-request-bytes',
      flags.maxRequestBytes,
      env.MAX_REQUEST_BYTES,
      DEFAULT_MAX_REQUEST_BYTES,
    ),
    maxUserStorageBytes: byteLimit(
      '--max-user-storage-bytes',
      flags.maxUserStorageBytes,
      env.MAX_USER_STORAGE_BYTES,
      DEFAULT_MAX_USER_STORAGE_BYTES,
    ),
  };
}
