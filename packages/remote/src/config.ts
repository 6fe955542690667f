/**
 * Where the server keeps its state and what it allows: from flags first, then the environment
 * variables of its deployment, then defaults. The data dir is private (0700).
 */

import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_USER_STORAGE_BYTES } from 'ryeos';
import { removeRunFolder } from './run-process.js';

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
  /** A run still going after this long is stopped (its tool cancelled, its thread ended). */
  maxRunSeconds: number;
  /** Request bytes held at once over all requests; a body past it is refused (503). Default 4 bodies' worth. */
  maxInflightBytes?: number;
  /** Headers and body must arrive within this many seconds (else 408). Default 60. */
  maxBodySeconds?: number;
  /** Open connections from one client address; more are refused (503). Default 64. */
  maxConnectionsPerClient?: number;
  /** Runs one user may hold at once, of the server's slots. Default half of them, at least 1. */
  maxRunsPerUser?: number;
  /** Run workers started ahead of the runs that will take them (0: each run starts its own). Default 2. */
  runPool?: number;
}

/** How long a run may take unless told otherwise. */
export const DEFAULT_MAX_RUN_SECONDS = 900;
/** Bodies' worth of bytes the server holds at once unless told otherwise. */
export const DEFAULT_INFLIGHT_BODIES = 4;
export const DEFAULT_MAX_BODY_SECONDS = 60;
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64;
/** Most run workers kept started ahead: each holds a node process's memory while it waits. */
export const MAX_RUN_POOL = 16;

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

/**
 * Makes a folder private to the server's account (0700), or checks that an existing one is: a
 * folder someone else can read or enter is refused, never silently narrowed (it could be a
 * home directory named by mistake).
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = statSync(dir);
  if (!stat.isDirectory()) {
    throw new RyeError('CONFIG', `${dir} is not a folder`, {
      hint: 'Point the data dir (or that path) at a folder.',
    });
  }
  if ((stat.mode & 0o077) !== 0) {
    throw new RyeError(
      'CONFIG',
      `${dir} can be read by other accounts; it will hold keys, secrets and users' stores`,
      {
        hint: `Make it private (chmod 700 ${dir}) or pick a new folder.`,
      },
    );
  }
}

/** The data dir, the store base and the runs' folder, each private to the server's account. */
export function ensurePrivateDirs(paths: RemotePaths): void {
  for (const dir of [paths.dataDir, paths.casBase, paths.runsDir]) ensurePrivateDir(dir);
}

/** Removes the temp spaces of runs a previous server process did not finish (killed, crashed). */
export function removeLeftoverRuns(runsDir: string, python: string | undefined): void {
  // A leftover run may still have a live process (its supervisor was killed): the removal never
  // follows a link and may write that folder only.
  for (const name of readdirSync(runsDir)) removeRunFolder(join(runsDir, name), python);
}

/** A positive whole number from a flag, else its environment variable, else the default. */
function positiveLimit(
  name: string,
  flag: string | undefined,
  envValue: string | undefined,
  fallback: number,
  unit = 'bytes',
): number {
  const text = flag ?? (envValue || undefined);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RyeError('VALIDATION', `${name} must be a positive whole number of ${unit}, got '${text}'`, {
      hint: `Pass a number of ${unit} such as ${fallback}.`,
    });
  }
  return value;
}

export function remoteLimits(
  flags: {
    maxRequestBytes?: string | undefined;
    maxUserStorageBytes?: string | undefined;
    maxRunSeconds?: string | undefined;
    maxInflightBytes?: string | undefined;
    maxBodySeconds?: string | undefined;
    maxConnectionsPerClient?: string | undefined;
    maxRunsPerUser?: string | undefined;
    runPool?: string | undefined;
  },
  env: Env,
): RemoteLimits {
  const maxRequestBytes = positiveLimit(
    '--max-request-bytes',
    flags.maxRequestBytes,
    env.MAX_REQUEST_BYTES,
    DEFAULT_MAX_REQUEST_BYTES,
  );
  const optional = (
    name: string,
    flag: string | undefined,
    envValue: string | undefined,
    example: number,
    unit?: string,
  ): number | undefined =>
    flag === undefined && !envValue ? undefined : positiveLimit(name, flag, envValue, example, unit);
  const maxInflightBytes = optional(
    '--max-inflight-bytes',
    flags.maxInflightBytes,
    env.MAX_INFLIGHT_BYTES,
    DEFAULT_INFLIGHT_BODIES * maxRequestBytes,
  );
  const maxBodySeconds = optional(
    '--max-body-seconds',
    flags.maxBodySeconds,
    env.MAX_BODY_SECONDS,
    DEFAULT_MAX_BODY_SECONDS,
    'seconds',
  );
  const maxConnectionsPerClient = optional(
    '--max-connections-per-client',
    flags.maxConnectionsPerClient,
    env.MAX_CONNECTIONS_PER_CLIENT,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    'connections',
  );
  const maxRunsPerUser = optional(
    '--max-runs-per-user',
    flags.maxRunsPerUser,
    env.MAX_RUNS_PER_USER,
    2,
    'runs',
  );
  const runPool = poolSize(flags.runPool, env.RUN_POOL);
  return {
    maxRequestBytes,
    maxUserStorageBytes: positiveLimit(
      '--max-user-storage-bytes',
      flags.maxUserStorageBytes,
      env.MAX_USER_STORAGE_BYTES,
      DEFAULT_MAX_USER_STORAGE_BYTES,
    ),
    maxRunSeconds: positiveLimit(
      '--max-run-seconds',
      flags.maxRunSeconds,
      env.MAX_RUN_SECONDS,
      DEFAULT_MAX_RUN_SECONDS,
      'seconds',
    ),
    ...(maxInflightBytes !== undefined ? { maxInflightBytes } : {}),
    ...(maxBodySeconds !== undefined ? { maxBodySeconds } : {}),
    ...(maxConnectionsPerClient !== undefined ? { maxConnectionsPerClient } : {}),
    ...(maxRunsPerUser !== undefined ? { maxRunsPerUser } : {}),
    ...(runPool !== undefined ? { runPool } : {}),
  };
}

/** Spare run workers: a whole number from 0 (none) to 16, from the flag, else the variable. */
function poolSize(flag: string | undefined, envValue: string | undefined): number | undefined {
  const text = flag ?? (envValue || undefined);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_RUN_POOL) {
    throw new RyeError(
      'VALIDATION',
      `--run-pool must be a whole number from 0 to ${MAX_RUN_POOL}, got '${text}'`,
      {
        hint: 'Pass the number of run workers to keep started ahead, such as 2 (0 starts one per run).',
      },
    );
  }
  return value;
}
