/**
 * The connection pool and transactions of one store. `pg` is loaded here, when a store is opened,
 * never when the package is imported: a host that never configures Postgres never loads it.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { isRetryable, type StorePart, translate } from './errors.js';

/** How often a transaction that lost a deadlock or serialization race is run again. */
const RETRIES = 5;

export interface Db {
  readonly pool: Pool;
  /** The password of the connection string, blanked out of every error message. */
  readonly secret: string | undefined;
  query<R = Record<string, unknown>>(
    part: StorePart,
    operation: string,
    sql: string,
    params?: unknown[],
  ): Promise<R[]>;
  /** Runs `body` in one transaction (retried on deadlock); any error rolls it back. */
  transaction<T>(part: StorePart, operation: string, body: (client: PoolClient) => Promise<T>): Promise<T>;
}

export interface DbOptions {
  connectionString: string;
  /** Connections the pool keeps at most. */
  poolSize: number;
  /** How long a statement waits for a row lock another transaction holds before failing. */
  lockTimeoutMs: number;
  connectTimeoutMs: number;
  /** Idle connections do not keep the process alive (a pool shared by many stores is never ended). */
  allowExitOnIdle?: boolean;
}

export function passwordOf(connectionString: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(connectionString).password);
    return password || undefined;
  } catch {
    // A key=value connection string: find `password=...`.
    return /(?:^|\s)password\s*=\s*'?([^'\s]+)/.exec(connectionString)?.[1];
  }
}

export async function loadPg(): Promise<typeof import('pg')> {
  const module = (await import('pg')) as typeof import('pg') & { default?: typeof import('pg') };
  return module.default ?? module;
}

export async function openDb(options: DbOptions): Promise<Db> {
  const pg = await loadPg();
  const config: PoolConfig = {
    connectionString: options.connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    lock_timeout: options.lockTimeoutMs,
    application_name: 'ryeos-store',
    allowExitOnIdle: options.allowExitOnIdle ?? false,
  };
  const pool = new pg.Pool(config);
  // An idle connection that breaks must not crash the process: the next query reports it.
  pool.on('error', () => {});
  const secret = passwordOf(options.connectionString);
  const db: Db = {
    pool,
    secret,
    async query(part, operation, sql, params) {
      try {
        return (await pool.query(sql, params)).rows;
      } catch (error) {
        throw translate(part, operation, error, secret);
      }
    },
    async transaction(part, operation, body) {
      for (let attempt = 1; ; attempt++) {
        let client: PoolClient;
        try {
          client = await pool.connect();
        } catch (error) {
          throw translate(part, operation, error, secret);
        }
        try {
          await client.query('BEGIN');
          const result = await body(client);
          await client.query('COMMIT');
          client.release();
          return result;
        } catch (error) {
          // A connection that cannot even roll back is broken: destroyed, not returned to the pool.
          const broken = await client.query('ROLLBACK').then(
            () => false,
            () => true,
          );
          client.release(broken);
          if (attempt < RETRIES && isRetryable(error)) continue;
          throw translate(part, operation, error, secret);
        }
      }
    },
  };
  return db;
}
