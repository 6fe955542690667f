/**
 * Opens the thread store of one project on a PostgreSQL database: the registry and ledger keyed by
 * a project column (many projects share one database), worker heartbeats, and a listener for
 * `waitForChange`. The SQL lives in registry.ts, ledger.ts, liveness.ts and schema.ts.
 */
import { resolve } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { type ThreadStore, type ThreadStoreOpener, threadsStateRoot } from '@ryeos/threads';
import { ChangeListener } from './changes.js';
import { type Db, openDb } from './db.js';
import { type BudgetWarning, PostgresBudgetLedger } from './ledger.js';
import { heartbeat, markStale } from './liveness.js';
import { PostgresThreadRecords } from './records.js';
import { PostgresThreadRegistry } from './registry.js';
import { channelOf, checkSchemaName, migrate } from './schema.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`; never logged nor put in an error. */
  connectionString: string;
  /** The schema holding the store's tables, created on first open (default `ryeos`). */
  schema?: string;
  /**
   * The worker this process runs as. Threads it registers or takes over record it, and stay
   * alive as long as its heartbeat does; without one, a thread is tracked by its pid.
   */
  workerId?: string;
  /** The project whose threads the store holds (default: the current directory). */
  projectPath?: string;
  /** The key of the project's rows (default: `projectPath`, resolved). */
  project?: string;
  /** How often the worker's heartbeat is written (default 2000 ms). */
  heartbeatMs?: number;
  /** A worker whose heartbeat is older than this is gone: `markStale` fails its threads (default 10000 ms). */
  staleAfterMs?: number;
  /** How long a statement waits for a row another transaction holds (default 5000 ms). */
  lockTimeoutMs?: number;
  /** Connections the pool keeps at most (default 10; an opener's stores share one), besides each store's listener. */
  poolSize?: number;
  /** Called when a thread's actual spend passes its reservation (logged, never blocking). */
  onBudgetWarning?: BudgetWarning;
}

const DEFAULT_SCHEMA = 'ryeos';

function invalid(message: string, hint: string, reason: string): RyeError {
  return new RyeError('VALIDATION', message, { hint, details: { reason } });
}

function checkOptions(options: PostgresStoreOptions): void {
  if (typeof options.connectionString !== 'string' || options.connectionString.trim() === '') {
    throw invalid(
      'The PostgreSQL thread store needs a connection string',
      'Pass connectionString (postgres://user:password@host:5432/database), e.g. from RYE_DATABASE_URL.',
      'missing_connection_string',
    );
  }
  if (/^postgres(ql)?:/i.test(options.connectionString) && !URL.canParse(options.connectionString)) {
    // Said without the string itself: it may hold a password.
    throw invalid(
      'The PostgreSQL connection string is not a valid URL',
      'Write it as postgres://user:password@host:5432/database, percent-encoding special characters in the password.',
      'invalid_connection_string',
    );
  }
  const { workerId } = options;
  if (workerId !== undefined && !/^[\w.:@-]{1,200}$/.test(workerId)) {
    throw invalid(
      `Invalid worker id ${JSON.stringify(workerId.slice(0, 80))}`,
      'A worker id is 1–200 letters, digits, and . _ : @ - (for example the host name and a number).',
      'invalid_worker_id',
    );
  }
  for (const name of ['heartbeatMs', 'staleAfterMs', 'lockTimeoutMs', 'poolSize'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      throw invalid(
        `${name} must be a positive integer, got ${value}`,
        `Give ${name} as a whole number above 0.`,
        'invalid_option',
      );
    }
  }
  if ((options.staleAfterMs ?? 10_000) <= (options.heartbeatMs ?? 2000)) {
    throw invalid(
      `staleAfterMs (${options.staleAfterMs ?? 10_000}) must be longer than heartbeatMs (${options.heartbeatMs ?? 2000})`,
      'Give a worker several heartbeats before it counts as gone, for example staleAfterMs = 5 × heartbeatMs.',
      'invalid_option',
    );
  }
}

/** Where a store's connections come from: a pool of its own, or one its opener shares. */
interface Connections {
  acquire(): Promise<Db>;
  /** Called once, when the store closes or fails to open. */
  release(db: Db): Promise<void>;
  /** Brings the schema up to date (the migrations). */
  prepare(db: Db, schema: string): Promise<void>;
}

function dbOptions(options: PostgresStoreOptions, allowExitOnIdle: boolean) {
  return {
    connectionString: options.connectionString,
    poolSize: options.poolSize ?? 10,
    lockTimeoutMs: options.lockTimeoutMs ?? 5000,
    connectTimeoutMs: 10_000,
    allowExitOnIdle,
  };
}

/** Opens the store; a failure releases what was acquired. Each call answers a store of its own. */
async function openWith(options: PostgresStoreOptions, connections: Connections): Promise<ThreadStore> {
  checkOptions(options);
  const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const projectPath = resolve(options.projectPath ?? process.cwd());
  const project = options.project ?? projectPath;
  const workerId = options.workerId ?? null;
  const db = await connections.acquire();
  let beat: NodeJS.Timeout | undefined;
  try {
    await connections.prepare(db, schema);
    const s = `"${schema}"`;
    if (workerId !== null) {
      await heartbeat(db, s, workerId);
      // Not keeping the process alive: a worker's own loop does that.
      beat = setInterval(
        () => void heartbeat(db, s, workerId).catch(() => undefined),
        options.heartbeatMs ?? 2000,
      );
      beat.unref();
    }
    const registry = new PostgresThreadRegistry({ db, s, project, workerId });
    const ledger = new PostgresBudgetLedger({ db, s, project, warn: options.onBudgetWarning ?? (() => {}) });
    const listener = new ChangeListener(options.connectionString, channelOf(schema), project);
    const liveness = { db, s, project, staleAfterMs: options.staleAfterMs ?? 10_000 };
    let open = true;
    return Object.freeze({
      stateDir: threadsStateRoot(projectPath),
      registry,
      ledger,
      records: new PostgresThreadRecords({ db, s, project }),
      markStale: (isAlive: (pid: number) => boolean) => markStale(liveness, ledger, isAlive),
      waitForChange: (signal: AbortSignal) => listener.wait(signal),
      async close() {
        if (!open) return;
        open = false;
        clearInterval(beat);
        await listener.close();
        await connections.release(db);
      },
    });
  } catch (error) {
    clearInterval(beat);
    await connections.release(db);
    throw error;
  }
}

/**
 * Opens one project's thread store on PostgreSQL, migrating the schema first (safe from many
 * processes at once). `pg` is loaded now, not when the package is imported.
 */
export function openPostgresThreadStore(options: PostgresStoreOptions): Promise<ThreadStore> {
  return openWith(options, {
    acquire: async () => openDb(dbOptions(options, false)),
    release: (db) => db.pool.end().catch(() => undefined),
    prepare: migrate,
  });
}

export type PostgresStoreOpenerOptions = Omit<PostgresStoreOptions, 'projectPath' | 'project'> & {
  /** The key of a project's rows (default: its resolved path). */
  projectKey?: (projectPath: string) => string;
};

/**
 * A `ThreadStoreOpener` for hosts: `(projectPath) => store`, every project in the same database
 * and schema, told apart by its key. The stores it opens share one pool (`poolSize` connections
 * at most, however many threads run at once; idle ones never keep the process alive) and the
 * migrations run on the first open only.
 */
export function postgresStoreOpener(options: PostgresStoreOpenerOptions): ThreadStoreOpener {
  const { projectKey, ...storeOptions } = options;
  checkOptions(storeOptions);
  let pool: Promise<Db> | undefined;
  let migrated: Promise<void> | undefined;
  // A failed first attempt (server down) is not remembered: the next open tries again.
  const retryable = <T>(promise: Promise<T>, forget: () => void) =>
    promise.catch((error: unknown) => {
      forget();
      throw error;
    });
  const connections: Connections = {
    acquire: () =>
      (pool ??= retryable(openDb(dbOptions(storeOptions, true)), () => {
        pool = undefined;
      })),
    release: async () => {},
    prepare: (db, schema) =>
      (migrated ??= retryable(migrate(db, schema), () => {
        migrated = undefined;
      })),
  };
  return (projectPath) => {
    const resolved = resolve(projectPath);
    return openWith(
      { ...storeOptions, projectPath: resolved, project: projectKey?.(resolved) ?? resolved },
      connections,
    );
  };
}
