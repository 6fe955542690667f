// What the Postgres store does beyond the shared conformance suite: heartbeats instead of pids,
// exact decimal money, migrations under concurrent openers, projects side by side in one
// database, and errors that never show the connection string's password.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRyeError, type RyeError } from '@ryeos/lillux';
import type { ThreadStore } from '@ryeos/threads';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, openPostgresThreadStore, postgresStoreOpener } from '../src/index.js';
import { PASSWORD, startPostgres, type TestPostgres } from '../src/testing.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

const opened: ThreadStore[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function database(): Promise<string> {
  const url = await postgres.createDatabase();
  cleanups.push(() => postgres.dropDatabase(url));
  return url;
}

function projectDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rye-pg-project-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function open(options: Parameters<typeof openPostgresThreadStore>[0]): Promise<ThreadStore> {
  const store = await openPostgresThreadStore(options);
  opened.push(store);
  return store;
}

async function rejection(promise: Promise<unknown>): Promise<RyeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isRyeError(error)).toBe(true);
  return error as RyeError;
}

describe('stale threads by worker heartbeat', () => {
  it("fails a worker's threads once its heartbeat is older than the timeout, whatever their pid", async () => {
    const connectionString = await database();
    const projectPath = projectDir();
    const worker = await open({ connectionString, projectPath, workerId: 'host-a.1' });
    const other = await open({ connectionString, projectPath, workerId: 'host-b.1', staleAfterMs: 60_000 });
    await worker.ledger.register('w/root', 1);
    for (const id of ['w/on-a', 'w/on-b']) {
      await worker.registry.register(id, 'w');
      await worker.ledger.reserve(id, 0.25, 'w/root');
      await worker.registry.updateStatus(id, 'running');
    }
    // w/on-b is taken over by the other worker: it records the worker that runs it.
    expect(await other.registry.claimPid('w/on-b', process.pid, process.pid)).toBe(true);
    await worker.ledger.incrementActual('w/on-a', 0.125);

    // Both heartbeats are fresh: nothing is stale, even with every pid reported dead.
    expect(await other.markStale(() => false)).toEqual([]);

    // Worker a stops beating (its process died): put its last heartbeat an hour back.
    await postgres.sql(
      connectionString,
      `UPDATE ryeos.workers SET last_seen = now() - interval '1 hour' WHERE worker_id = 'host-a.1'`,
    );
    expect(await other.markStale(() => true)).toEqual(['w/on-a']);
    const failed = await other.registry.getThread('w/on-a');
    expect(failed?.status).toBe('error');
    expect(failed?.result).toMatchObject({ stale: true, worker_id: 'host-a.1' });
    expect((await other.ledger.get('w/on-a'))?.status).toBe('error');
    expect((await other.ledger.get('w/root'))?.actual_spend).toBe(0.125);
    expect(await other.ledger.getRemaining('w/root')).toBe(0.625);
    expect((await other.registry.getThread('w/on-b'))?.status).toBe('running');
    expect(await other.markStale(() => false)).toEqual([]);
  });

  it('keeps the pid contract for a thread no worker runs', async () => {
    const connectionString = await database();
    const store = await open({ connectionString, projectPath: projectDir() });
    await store.registry.register('p/one', 'p');
    await store.registry.updateStatus('p/one', 'running');
    expect(await store.markStale(() => true)).toEqual([]);
    expect(await store.markStale((pid) => pid !== process.pid)).toEqual(['p/one']);
  });
});

describe('money', () => {
  it('keeps amounts in numeric columns and splits $1.00 into ten $0.10 children exactly', async () => {
    const connectionString = await database();
    const store = await open({ connectionString, projectPath: projectDir() });
    const types = await postgres.sql<{ column_name: string; data_type: string }>(
      connectionString,
      `SELECT column_name, data_type FROM information_schema.columns
       WHERE table_schema = 'ryeos' AND column_name IN ('reserved_spend', 'actual_spend', 'max_spend', 'spend')`,
    );
    expect(types.length).toBe(4);
    expect(new Set(types.map((t) => t.data_type))).toEqual(new Set(['numeric']));
    await store.ledger.register('m/root', 1);
    for (let i = 0; i < 10; i++) await store.ledger.reserve(`m/c${i}`, 0.1, 'm/root');
    expect(await store.ledger.getRemaining('m/root')).toBe(0);
    const refused = await rejection(store.ledger.reserve('m/c10', 0.01, 'm/root'));
    expect(refused.details.reason).toBe('insufficient_budget');
    for (let i = 0; i < 10; i++) await store.ledger.settle(`m/c${i}`, 0.07, 'completed');
    // 0.07 added ten times is 0.7000000000000001 in floating point; numeric keeps 0.70.
    expect((await store.ledger.get('m/root'))?.actual_spend).toBe(0.7);
    const [raw] = await postgres.sql<{ actual_spend: string }>(
      connectionString,
      `SELECT actual_spend::text FROM ryeos.budget_ledger WHERE thread_id = 'm/root'`,
    );
    expect(raw?.actual_spend).toBe('0.70');
  });

  it("never lowers a thread's recorded spend at settle: two runs of it charged what they used", async () => {
    const connectionString = await database();
    const store = await open({ connectionString, projectPath: projectDir() });
    await store.ledger.register('s/root', 1);
    await store.ledger.reserve('s/child', 0.5, 's/root');
    // A stalled worker's response and the taking-up worker's two, each charged as it came.
    for (const delta of [0.125, 0.0625, 0.0625]) await store.ledger.incrementActual('s/child', delta);
    // The run that settles counts only the responses it saw.
    await store.ledger.reportActual('s/child', 0.125);
    expect((await store.ledger.get('s/child'))?.actual_spend).toBe(0.25);
    await store.ledger.settle('s/child', 0.125, 'completed');
    expect((await store.ledger.get('s/child'))?.actual_spend).toBe(0.25);
    expect((await store.ledger.get('s/root'))?.actual_spend).toBe(0.25);
  });

  it('refuses a negative or non-finite amount before it reaches the database', async () => {
    const store = await open({ connectionString: await database(), projectPath: projectDir() });
    expect((await rejection(store.ledger.register('n/root', -1))).code).toBe('VALIDATION');
    expect((await rejection(store.ledger.register('n/root', Number.NaN))).code).toBe('VALIDATION');
  });
});

describe('migrations', () => {
  it('eight openers of a fresh database migrate it once', async () => {
    const connectionString = await database();
    const projectPath = projectDir();
    const stores = await Promise.all(
      Array.from({ length: 8 }, () => open({ connectionString, projectPath })),
    );
    expect(stores.length).toBe(8);
    const versions = await postgres.sql<{ version: number }>(
      connectionString,
      'SELECT version FROM ryeos.schema_migrations ORDER BY version',
    );
    expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('refuses a schema a newer version migrated, naming the versions', async () => {
    const connectionString = await database();
    await open({ connectionString, projectPath: projectDir(), schema: 'newer' });
    await postgres.sql(
      connectionString,
      `INSERT INTO newer.schema_migrations (version, description) VALUES (999, 'future')`,
    );
    const error = await rejection(openPostgresThreadStore({ connectionString, schema: 'newer' }));
    expect(error.code).toBe('CONFIG');
    expect(error.details).toMatchObject({ reason: 'schema_too_new', version: 999 });
    expect(error.hint).toContain('Upgrade');
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    const error = await rejection(
      openPostgresThreadStore({ connectionString: postgres.url(), schema: 'x"; DROP SCHEMA public; --' }),
    );
    expect(error.code).toBe('VALIDATION');
    expect(error.details.reason).toBe('invalid_schema');
  });
});

describe('projects in one database', () => {
  it("keeps each project's threads and budgets apart, keyed by the project's path", async () => {
    const connectionString = await database();
    const opener = postgresStoreOpener({ connectionString });
    const [a, b] = [projectDir(), projectDir()];
    const storeA = await opener(a);
    const storeB = await opener(b);
    opened.push(storeA, storeB);
    expect(storeA.stateDir).toBe(join(a, '.ai', 'state', 'threads'));
    await storeA.registry.register('same/id', 'same');
    await storeB.registry.register('same/id', 'same');
    await storeA.registry.updateStatus('same/id', 'completed');
    expect((await storeB.registry.getThread('same/id'))?.status).toBe('created');
    expect((await storeA.registry.list()).length).toBe(1);
    await storeA.ledger.register('root', 1);
    await expect(storeB.ledger.getRemaining('root')).rejects.toMatchObject({
      details: { reason: 'budget_not_registered' },
    });
  });
});

describe('change notifications', () => {
  it('writes and wakes a waiter for a project whose key is longer than a NOTIFY payload', async () => {
    const connectionString = await database();
    const project = `k/${'x'.repeat(9000)}`;
    const waiter = await open({ connectionString, project });
    const writer = await open({ connectionString, project });
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(new Error('no notification within 20 s')), 20_000);
    try {
      // The first wait ends when the store's listener is ready; the second hears the write.
      await waiter.waitForChange(stop.signal);
      const changed = waiter.waitForChange(stop.signal);
      await writer.registry.register('n/written', 'n');
      await changed;
    } finally {
      clearTimeout(timer);
    }
    expect((await waiter.registry.getThread('n/written'))?.status).toBe('created');
  });
});

describe('an opener for hosts', () => {
  it('shares one pool of poolSize connections among the stores it opens', async () => {
    const connectionString = await database();
    const opener = postgresStoreOpener({ connectionString, poolSize: 2 });
    const project = projectDir();
    const stores = await Promise.all(Array.from({ length: 12 }, () => opener(project)));
    opened.push(...stores);
    await Promise.all(stores.map((store, i) => store.registry.register(`o/t-${i}`, 'o')));
    const [{ count }] = (await postgres.sql<{ count: string }>(
      connectionString,
      `SELECT count(*)::text AS count FROM pg_stat_activity WHERE application_name = 'ryeos-store' AND datname = current_database()`,
    )) as [{ count: string }];
    expect(Number(count)).toBeLessThanOrEqual(2);
    expect((await stores[0]!.registry.list()).length).toBe(12);
  });

  it('never keeps the process alive once its stores are closed', () => {
    // The child would hang on an idle pooled connection; it must exit by itself with 0.
    const script = `
      const { postgresStoreOpener } = await import('./dist/index.js');
      const opener = postgresStoreOpener({ connectionString: process.argv[1] });
      const store = await opener(process.cwd());
      await store.registry.list();
      await store.close();
    `;
    return database().then((url) => {
      execFileSync(process.execPath, ['--input-type=module', '-e', script, url], {
        cwd: join(import.meta.dirname, '..'),
        timeout: 25_000,
        stdio: 'pipe',
      });
    });
  });
});

describe('locks', () => {
  it('rejects with UNAVAILABLE, naming the ledger, when a budget row stays locked past the lock timeout', async () => {
    const connectionString = await database();
    const store = await open({ connectionString, projectPath: projectDir(), lockTimeoutMs: 200 });
    await store.ledger.register('l/root', 1);
    // Another worker's transaction holds the parent's row and does not end.
    const holder = new pg.Client({ connectionString });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM ryeos.budget_ledger WHERE thread_id = 'l/root' FOR UPDATE`);
    const error = await rejection(store.ledger.reserve('l/child', 0.25, 'l/root'));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.details).toMatchObject({ reason: 'budget_ledger_locked', operation: 'reserve' });
    await holder.query('ROLLBACK');
    await store.ledger.reserve('l/child', 0.25, 'l/root');
    expect(await store.ledger.getRemaining('l/root')).toBe(0.75);
  });
});

describe('connection strings', () => {
  it('never puts the password in an error: wrong password, and no server at all', async () => {
    const secret = 'S3cret-Pa55word';
    const wrong = `postgres://rye_test:${secret}@127.0.0.1:${postgres.port}/postgres`;
    const denied = await rejection(openPostgresThreadStore({ connectionString: wrong }));
    const nobody = await rejection(
      openPostgresThreadStore({ connectionString: `postgres://rye_test:${secret}@127.0.0.1:1/postgres` }),
    );
    expect(nobody.code).toBe('UNAVAILABLE');
    for (const error of [denied, nobody]) {
      const shown = JSON.stringify({
        message: error.message,
        hint: error.hint,
        details: error.details,
        stack: error.stack,
      });
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(PASSWORD);
    }
  });

  it('refuses a missing or malformed connection string, a malformed worker id and a stale timeout shorter than a heartbeat with VALIDATION', async () => {
    const missing = await rejection(openPostgresThreadStore({ connectionString: '' }));
    expect(missing.details.reason).toBe('missing_connection_string');
    expect(missing.hint).toContain('RYE_DATABASE_URL');
    const malformed = await rejection(
      openPostgresThreadStore({ connectionString: 'postgres://u:Zs3cret@host:port/db' }),
    );
    expect(malformed.details.reason).toBe('invalid_connection_string');
    expect(JSON.stringify({ message: malformed.message, hint: malformed.hint })).not.toContain('Zs3cret');
    const badWorker = await rejection(
      openPostgresThreadStore({ connectionString: postgres.url(), workerId: 'a b\n' }),
    );
    expect(badWorker.details.reason).toBe('invalid_worker_id');
    const tooEager = await rejection(
      openPostgresThreadStore({ connectionString: postgres.url(), heartbeatMs: 5000, staleAfterMs: 1000 }),
    );
    expect(tooEager.message).toContain('staleAfterMs');
  });
});
