import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRyeError } from '@ryeos/lillux';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isProcessAlive,
  openThreadStore,
  ThreadAlreadyRegistered,
  ThreadRegistryLocked,
  type ThreadStore,
} from '../src/store/index.js';
import { sqliteDatabases } from '../src/store/sqlite-store.js';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let root: string;
let stateDir: string;
let store: ThreadStore;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-registry-'));
  stateDir = join(root, '.ai', 'state', 'threads');
  store = openThreadStore(stateDir);
});

afterEach(async () => {
  store.close();
  rmSync(root, { recursive: true, force: true });
});

/** A second, independent connection to the registry file, as another process would have. */
function rawRegistry(): Database.Database {
  return new Database(join(stateDir, 'registry.db'));
}

describe('registry.db schema (spec threads §2.1)', () => {
  it('creates the state folder 0700 and the database 0600', async () => {
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(stateDir, 'registry.db')).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'budget_ledger.db')).mode & 0o777).toBe(0o600);
  });

  it('has the spec columns, types, defaults and indexes', async () => {
    const db = rawRegistry();
    try {
      const columns = db.pragma('table_info(threads)') as {
        name: string;
        type: string;
        notnull: number;
        dflt_value: string | null;
        pk: number;
      }[];
      expect(columns.map((c) => [c.name, c.type, c.notnull, c.dflt_value, c.pk])).toEqual([
        ['thread_id', 'TEXT', 0, null, 1],
        ['directive', 'TEXT', 1, null, 0],
        ['parent_id', 'TEXT', 0, null, 0],
        ['status', 'TEXT', 0, "'created'", 0],
        ['created_at', 'TEXT', 0, null, 0],
        ['updated_at', 'TEXT', 0, null, 0],
        ['completed_at', 'TEXT', 0, null, 0],
        ['result', 'TEXT', 0, null, 0],
        ['turns', 'INTEGER', 0, '0', 0],
        ['input_tokens', 'INTEGER', 0, '0', 0],
        ['output_tokens', 'INTEGER', 0, '0', 0],
        ['spawn_count', 'INTEGER', 0, '0', 0],
        ['spend', 'REAL', 0, '0.0', 0],
        ['pid', 'INTEGER', 0, null, 0],
        ['model', 'TEXT', 0, null, 0],
        ['continuation_of', 'TEXT', 0, null, 0],
        ['continuation_thread_id', 'TEXT', 0, null, 0],
        ['chain_root_id', 'TEXT', 0, null, 0],
      ]);
      const indexes = (db.pragma('index_list(threads)') as { name: string }[])
        .map((i) => i.name)
        .filter((name) => name.startsWith('idx_'))
        .sort();
      expect(indexes).toEqual(['idx_threads_parent', 'idx_threads_status']);
      expect((db.pragma('index_info(idx_threads_parent)') as { name: string }[]).map((c) => c.name)).toEqual([
        'parent_id',
      ]);
      expect((db.pragma('index_info(idx_threads_status)') as { name: string }[]).map((c) => c.name)).toEqual([
        'status',
      ]);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  });

  it("sets WAL, the 5 s busy timeout and foreign keys on the store's own connection", async () => {
    const db = sqliteDatabases(store)!.registry as unknown as Database.Database;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });

  it('migrates an old table that stops at `result`, keeping its rows', async () => {
    store.close();
    rmSync(stateDir, { recursive: true });
    mkdirSync(stateDir, { recursive: true });
    const old = rawRegistry();
    old.exec(`CREATE TABLE threads (thread_id TEXT PRIMARY KEY, directive TEXT NOT NULL, parent_id TEXT,
      status TEXT DEFAULT 'created', created_at TEXT, updated_at TEXT, completed_at TEXT, result TEXT)`);
    old
      .prepare(
        'INSERT INTO threads (thread_id, directive, status, created_at, result) VALUES (?, ?, ?, ?, ?)',
      )
      .run('old/t-1', 'old', 'completed', '2025-01-01T00:00:00+00:00', '{"ok":true}');
    old.close();

    store = openThreadStore(stateDir);
    const row = await store.registry.getThread('old/t-1');
    expect(row).toMatchObject({
      directive: 'old',
      status: 'completed',
      result: { ok: true },
      turns: 0,
      input_tokens: 0,
      output_tokens: 0,
      spawn_count: 0,
      spend: 0,
      pid: null,
      model: null,
      continuation_of: null,
      continuation_thread_id: null,
      chain_root_id: null,
    });
    expect(await store.registry.tryIncrementSpawn('old/t-1', 1)).toBe(true);
    const db = rawRegistry();
    try {
      expect((db.pragma('table_info(threads)') as unknown[]).length).toBe(18);
      expect(db.pragma('index_list(threads)')).toHaveLength(3); // two indexes + the primary key's
    } finally {
      db.close();
    }
  });
});

describe('registry operations', () => {
  it('registers `created` with this process pid and ISO-8601 UTC times', async () => {
    const { registry } = store;
    await registry.register('d/a/a-1', 'd/a');
    await registry.register('d/b/b-2', 'd/b', 'd/a/a-1');
    const row = (await registry.getThread('d/b/b-2'))!;
    expect(row).toMatchObject({
      thread_id: 'd/b/b-2',
      directive: 'd/b',
      parent_id: 'd/a/a-1',
      status: 'created',
      completed_at: null,
      result: null,
      pid: process.pid,
      spawn_count: 0,
    });
    expect(row.created_at).toMatch(ISO_UTC);
    expect(row.updated_at).toBe(row.created_at);
    expect(await registry.exists('d/b/b-2')).toBe(true);
    expect(await registry.exists('nope')).toBe(false);
    expect(await registry.getThread('nope')).toBeUndefined();
  });

  it('refuses a second registration of the same id', async () => {
    await store.registry.register('x/x-1', 'x');
    let caught: unknown;
    try {
      await store.registry.register('x/x-1', 'x');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ThreadAlreadyRegistered);
    expect(isRyeError(caught) && caught.code).toBe('VALIDATION');
    expect((caught as Error).message).toBe('Thread x/x-1 is already registered');
  });

  it('updates pid, model, status (terminal statuses set completed_at) and result', async () => {
    const { registry } = store;
    await registry.register('t/t-1', 't');
    await registry.updatePid('t/t-1', 4242);
    await registry.setModel('t/t-1', 'claude-sonnet-4-5');
    await registry.updateStatus('t/t-1', 'running');
    let row = (await registry.getThread('t/t-1'))!;
    expect(row).toMatchObject({
      pid: 4242,
      model: 'claude-sonnet-4-5',
      status: 'running',
      completed_at: null,
    });

    await registry.updateStatus('t/t-1', 'completed');
    await registry.setResult('t/t-1', { cost: { spend: 0.25 }, outputs: { report: 'done' } });
    row = (await registry.getThread('t/t-1'))!;
    expect(row.status).toBe('completed');
    expect(row.completed_at).toMatch(ISO_UTC);
    expect(row.result).toEqual({ cost: { spend: 0.25 }, outputs: { report: 'done' } });
    for (const status of ['error', 'cancelled', 'continued'] as const) {
      await registry.register(`t/${status}`, 't');
      await registry.updateStatus(`t/${status}`, status);
      expect((await registry.getThread(`t/${status}`))!.completed_at).toMatch(ISO_UTC);
    }
  });

  it('keeps a result column it cannot parse as text instead of throwing', async () => {
    await store.registry.register('t/bad', 't');
    const db = rawRegistry();
    db.prepare('UPDATE threads SET result = ? WHERE thread_id = ?').run('{truncated', 't/bad');
    db.close();
    expect((await store.registry.getThread('t/bad'))!.result).toEqual({ unparsed: '{truncated' });
  });

  it('stores the cost snapshot', async () => {
    await store.registry.register('c/c-1', 'c');
    const stored = await store.registry.updateCostSnapshot('c/c-1', {
      turns: 3,
      input_tokens: 1200,
      output_tokens: 340,
      spend: 0.125,
      elapsed_seconds: 4.5,
    });
    expect(stored).toBe(true);
    expect(await store.registry.getThread('c/c-1')).toMatchObject({
      turns: 3,
      input_tokens: 1200,
      output_tokens: 340,
      spend: 0.125,
    });
  });

  it('lists active threads newest first, by status with a limit, and children in spawn order', async () => {
    const { registry } = store;
    for (const id of ['l/1', 'l/2', 'l/3', 'l/4'])
      await registry.register(id, 'l', id === 'l/1' ? null : 'l/1');
    await registry.updateStatus('l/2', 'running');
    await registry.updateStatus('l/3', 'completed');
    expect((await registry.listActive()).map((r) => r.thread_id)).toEqual(['l/4', 'l/2', 'l/1']);
    expect((await registry.list()).map((r) => r.thread_id)).toEqual(['l/4', 'l/3', 'l/2', 'l/1']);
    expect((await registry.list({ limit: 2 })).map((r) => r.thread_id)).toEqual(['l/4', 'l/3']);
    expect((await registry.list({ status: 'created' })).map((r) => r.thread_id)).toEqual(['l/4', 'l/1']);
    expect((await registry.list({ status: 'created', limit: 1 })).map((r) => r.thread_id)).toEqual(['l/4']);
    expect(await registry.list({ status: 'error' })).toEqual([]);
    expect((await registry.listChildren('l/1')).map((r) => r.thread_id)).toEqual(['l/2', 'l/3', 'l/4']);
    expect(await registry.listChildren('l/4')).toEqual([]);
  });

  it('links continuations and walks the chain root → terminal from any member', async () => {
    const { registry } = store;
    for (const id of ['c/1', 'c/2', 'c/3']) await registry.register(id, 'c');
    await registry.setContinuation('c/1', 'c/2');
    await registry.setChainInfo('c/2', 'c/1', 'c/1');
    await registry.setContinuation('c/2', 'c/3');
    await registry.setChainInfo('c/3', 'c/1', 'c/2');

    const first = (await registry.getThread('c/1'))!;
    expect(first).toMatchObject({ status: 'continued', continuation_thread_id: 'c/2' });
    expect(first.completed_at).toMatch(ISO_UTC);
    expect(await registry.getThread('c/3')).toMatchObject({ continuation_of: 'c/2', chain_root_id: 'c/1' });
    for (const member of ['c/1', 'c/2', 'c/3']) {
      expect((await registry.getChain(member)).map((r) => r.thread_id)).toEqual(['c/1', 'c/2', 'c/3']);
    }
    await registry.register('solo', 's');
    expect((await registry.getChain('solo')).map((r) => r.thread_id)).toEqual(['solo']);
    expect(await registry.getChain('missing')).toEqual([]);
  });

  it('a thread is continued once: a second continuation is refused, the same one again is not', async () => {
    const { registry } = store;
    for (const id of ['f/1', 'f/2a', 'f/2b']) await registry.register(id, 'f');
    expect(await registry.setContinuation('f/1', 'f/2a')).toBe(true);
    expect(await registry.setContinuation('f/1', 'f/2b')).toBe(false);
    expect(await registry.setContinuation('f/1', 'f/2a')).toBe(true);
    expect(await registry.getThread('f/1')).toMatchObject({ continuation_thread_id: 'f/2a' });
    expect(await registry.setContinuation('missing', 'f/2b')).toBe(false);
  });

  it('ends the chain walk on a cycle or a dangling link', async () => {
    const { registry } = store;
    for (const id of ['y/1', 'y/2', 'y/3']) await registry.register(id, 'y');
    await registry.setContinuation('y/1', 'y/2');
    await registry.setContinuation('y/2', 'y/3');
    await registry.setContinuation('y/3', 'y/1'); // a cycle forward …
    await registry.setChainInfo('y/1', 'y/1', 'y/3'); // … and backward
    await registry.setChainInfo('y/2', 'y/1', 'y/1');
    await registry.setChainInfo('y/3', 'y/1', 'y/2');
    const chain = (await registry.getChain('y/2')).map((r) => r.thread_id);
    expect(new Set(chain).size).toBe(3);
    expect(chain).toHaveLength(3);

    await registry.register('z/1', 'z');
    await registry.setContinuation('z/1', 'z/gone');
    await registry.setChainInfo('z/1', 'z/0', 'z/0');
    expect((await registry.getChain('z/1')).map((r) => r.thread_id)).toEqual(['z/1']);
  });

  it('grants spawn slots up to the limit, and none for an unknown parent', async () => {
    const { registry } = store;
    await registry.register('p/p-1', 'p');
    const granted: boolean[] = [];
    for (let i = 0; i < 4; i += 1) granted.push(await registry.tryIncrementSpawn('p/p-1', 3));
    expect(granted).toEqual([true, true, true, false]);
    expect((await registry.getThread('p/p-1'))!.spawn_count).toBe(3);
    expect(await registry.tryIncrementSpawn('p/p-1', 4)).toBe(true);
    expect(await registry.tryIncrementSpawn('missing', 50)).toBe(false);
  });

  it('marks created/running threads whose process is gone as errors', async () => {
    const { registry } = store;
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout.trim());
    for (const id of ['s/run', 's/new', 's/live', 's/done', 's/nopid']) await registry.register(id, 's');
    await registry.updateStatus('s/run', 'running');
    await registry.updatePid('s/run', deadPid);
    await registry.updatePid('s/new', deadPid);
    await registry.updateStatus('s/done', 'completed');
    await registry.updatePid('s/done', deadPid);
    const db = rawRegistry();
    db.prepare('UPDATE threads SET pid = NULL WHERE thread_id = ?').run('s/nopid');
    db.close();

    const asked: number[] = [];
    const marked = await store.markStale((pid) => {
      asked.push(pid);
      return isProcessAlive(pid);
    });
    expect(marked.sort()).toEqual(['s/new', 's/run']);
    expect(asked).not.toContain(null);
    const run = (await registry.getThread('s/run'))!;
    expect(run.status).toBe('error');
    expect(run.completed_at).toMatch(ISO_UTC);
    expect(run.result).toMatchObject({ stale: true, pid: deadPid });
    expect(String(run.result!.error)).toContain(`process ${deadPid} is no longer running`);
    expect((await registry.getThread('s/live'))!.status).toBe('created');
    expect((await registry.getThread('s/done'))!.status).toBe('completed');
    expect((await registry.getThread('s/nopid'))!.status).toBe('created');
    expect(await store.markStale(() => false)).toEqual(['s/live']);
  });

  it('tells live processes from dead ones', async () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    expect(isProcessAlive(Number(dead.stdout.trim()))).toBe(false);
  });

  it('sees writes made through another store on the same folder at once', async () => {
    const other = openThreadStore(stateDir);
    try {
      await other.registry.register('o/o-1', 'o');
      expect(await store.registry.exists('o/o-1')).toBe(true);
      await store.registry.updateStatus('o/o-1', 'running');
      expect((await other.registry.getThread('o/o-1'))!.status).toBe('running');
    } finally {
      other.close();
    }
  });

  it('reports a registry locked past the busy timeout; the cost snapshot is skipped instead', async () => {
    store.close();
    store = openThreadStore(stateDir, { busyTimeoutMs: 50 });
    await store.registry.register('k/k-1', 'k');
    const holder = rawRegistry();
    holder.exec('BEGIN IMMEDIATE');
    try {
      await expect(store.registry.updateStatus('k/k-1', 'running')).rejects.toThrow(ThreadRegistryLocked);
      const cost = { turns: 1, input_tokens: 1, output_tokens: 1, spend: 0, elapsed_seconds: 0 };
      expect(await store.registry.updateCostSnapshot('k/k-1', cost)).toBe(false);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    await store.registry.updateStatus('k/k-1', 'running');
    expect((await store.registry.getThread('k/k-1'))!.status).toBe('running');
  });

  it('closes idempotently', async () => {
    store.close();
    store.close();
    store = openThreadStore(stateDir);
    expect(store.stateDir).toBe(stateDir);
  });
});

describe('opening the store', () => {
  it('marks running threads whose process is gone as error, and releases their budget', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { spawnSync } = await import('node:child_process');
    const { openThreadStore } = await import('../src/store/index.js');
    const root = await mkdtemp(join(tmpdir(), 'rye-stale-'));
    try {
      const dir = join(root, '.ai', 'state', 'threads');
      const store = openThreadStore(dir);
      // A pid that existed and is gone: a process that has already exited.
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      await store.registry.register('s/dead', 'acme/s');
      await store.registry.updatePid('s/dead', Number(gone.stdout));
      await store.registry.updateStatus('s/dead', 'running');
      await store.ledger.register('s/dead', 1);
      await store.registry.register('s/alive', 'acme/s');
      await store.registry.updateStatus('s/alive', 'running');
      store.close();
      const reopened = openThreadStore(dir);
      try {
        expect(await reopened.registry.getThread('s/dead')).toMatchObject({
          status: 'error',
          result: { stale: true },
        });
        expect((await reopened.ledger.get('s/dead'))?.status).toBe('error');
        expect((await reopened.registry.getThread('s/alive'))?.status).toBe('running');
      } finally {
        reopened.close();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
