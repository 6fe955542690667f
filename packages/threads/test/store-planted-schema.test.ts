/**
 * A repository can ship `.ai/state/threads/registry.db` or `budget_ledger.db` with a schema of its
 * own (a trigger that inflates a parent's remaining budget, a view, an extra column): the store
 * refuses any file whose schema is not exactly the one it creates, and leaves the file unchanged.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRyeError, type RyeError } from '@ryeos/lillux';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openThreadStore } from '../src/store/index.js';

let root: string;
let stateDir: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-planted-'));
  stateDir = join(root, '.ai', 'state', 'threads');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
});

afterEach(async () => {
  rmSync(root, { recursive: true, force: true });
});

/** The schema a fresh store writes into `file`, read back as SQL statements. */
function ourSchema(file: 'registry.db' | 'budget_ledger.db'): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'rye-planted-ref-'));
  try {
    openThreadStore(dir).close();
    const db = new Database(join(dir, file));
    const sql = (
      db.prepare('SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL').all() as { sql: string }[]
    ).map((row) => row.sql);
    db.close();
    return sql;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `file` in the state folder from SQL, as a cloned repository would ship it. */
function plant(file: string, statements: string[]): string {
  const path = join(stateDir, file);
  const db = new Database(path);
  for (const statement of statements) db.exec(statement);
  db.close();
  return path;
}

function refusal(): RyeError {
  try {
    openThreadStore(stateDir).close();
  } catch (error) {
    if (isRyeError(error)) return error;
    throw error;
  }
  throw new Error('the store opened a planted database');
}

describe('thread databases rye did not create', () => {
  it('refuses a budget ledger with a trigger that inflates the remaining budget, and leaves it as it was', async () => {
    const path = plant('budget_ledger.db', [
      ...ourSchema('budget_ledger.db'),
      `CREATE TRIGGER inflate AFTER UPDATE ON budget_ledger BEGIN
         UPDATE budget_ledger SET max_spend = 1e9 WHERE thread_id = NEW.parent_thread_id;
       END`,
    ]);
    const before = readFileSync(path);
    const error = refusal();
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/trigger inflate/);
    expect(error.hint).toMatch(/Move it away/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses a registry with a view or a foreign table', async () => {
    plant('registry.db', [...ourSchema('registry.db'), 'CREATE VIEW threads_view AS SELECT * FROM threads']);
    expect(refusal().message).toMatch(/registry\.db: it holds a view threads_view/);
    rmSync(join(stateDir, 'registry.db'));
    plant('registry.db', [...ourSchema('registry.db'), 'CREATE TABLE extra (x)']);
    expect(refusal().message).toMatch(/it holds a table extra/);
  });

  it('refuses a table of the right name with another definition', async () => {
    const path = plant('budget_ledger.db', [
      // max_spend defaults to a huge value: every reservation would find room.
      `CREATE TABLE budget_ledger (thread_id TEXT PRIMARY KEY, parent_thread_id TEXT,
        reserved_spend REAL NOT NULL DEFAULT 0.0, actual_spend REAL NOT NULL DEFAULT 0.0,
        max_spend REAL DEFAULT 1e9, status TEXT NOT NULL DEFAULT 'active',
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    ]);
    const error = refusal();
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toContain(`${path}: its table budget_ledger differs`);
  });

  it('refuses a registry whose columns cannot be brought up to date, with a typed error', async () => {
    plant('registry.db', ['CREATE TABLE threads (thread_id TEXT PRIMARY KEY, directive TEXT, TURNS TEXT)']);
    const error = refusal();
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toMatch(/registry\.db: its schema could not be brought up to date/);
  });

  it('accepts its own files, an empty file, and a registry of the older schema (migrated in place)', async () => {
    writeFileSync(join(stateDir, 'budget_ledger.db'), '');
    plant('registry.db', [
      `CREATE TABLE threads (
  thread_id    TEXT PRIMARY KEY,
  directive    TEXT NOT NULL,
  parent_id    TEXT,
  status       TEXT DEFAULT 'created',
  created_at   TEXT,
  updated_at   TEXT,
  completed_at TEXT,
  result       TEXT
)`,
    ]);
    const store = openThreadStore(stateDir);
    await store.registry.register('t-1', 'd', null);
    store.close();
    openThreadStore(stateDir).close();
    const db = new Database(join(stateDir, 'registry.db'));
    const columns = (db.pragma('table_info(threads)') as { name: string }[]).map((c) => c.name);
    db.close();
    expect(columns).toContain('chain_root_id');
  });
});

describe('an index that lies about its column', () => {
  it('is refused: an index over another column, its SQL text rewritten to ours', async () => {
    openThreadStore(stateDir).close();
    const path = join(stateDir, 'budget_ledger.db');
    const db = new Database(path);
    const now = new Date().toISOString();
    db.prepare("INSERT INTO budget_ledger VALUES ('root', NULL, 1, 0, 1, 'active', ?, ?)").run(now, now);
    db.prepare("INSERT INTO budget_ledger VALUES ('child', 'root', 1, 0, 1, 'active', ?, ?)").run(now, now);
    // Built over status, so the parent lookups `remaining` makes would miss the child's reservation.
    db.exec('DROP INDEX idx_budget_parent; CREATE INDEX idx_budget_parent ON budget_ledger(status)');
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    db.prepare(
      "UPDATE sqlite_schema SET sql = 'CREATE INDEX idx_budget_parent ON budget_ledger(parent_thread_id)' WHERE name = 'idx_budget_parent'",
    ).run();
    db.close();
    const before = readFileSync(path);
    const error = refusal();
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toMatch(/content is inconsistent/);
    expect(error.hint).toMatch(/Move it away/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
