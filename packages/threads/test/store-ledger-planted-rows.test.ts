/**
 * Thread ids are predictable (`<directive>/<leaf>-<epoch ms>`), so a repository can ship
 * `budget_ledger.db` with rows for ids still to come: a root with a negative spend, or active
 * children already "reserved" under it. A new thread must start from a row of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRyeError, type RyeError } from '@ryeos/lillux';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InsufficientBudget, openThreadStore } from '../src/store/index.js';

let root: string;
let stateDir: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-ledger-planted-'));
  stateDir = join(root, '.ai', 'state', 'threads');
  openThreadStore(stateDir).close();
});

afterEach(async () => {
  rmSync(root, { recursive: true, force: true });
});

/** Writes rows into the ledger file the way a cloned repository would ship them. */
function plant(rows: [string, string | null, number, number, number, string][]): void {
  const db = new Database(join(stateDir, 'budget_ledger.db'));
  // A hostile file need not satisfy the foreign key: the planted parent does not exist yet.
  db.pragma('foreign_keys = OFF');
  const now = new Date().toISOString();
  const insert = db.prepare('INSERT INTO budget_ledger VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  for (const row of rows) insert.run(...row, now, now);
  db.close();
}

/** Changes the ledger file from another connection, as a process writing behind rye's back would. */
function rewrite(sql: string): void {
  const db = new Database(join(stateDir, 'budget_ledger.db'));
  db.exec(sql);
  db.close();
}

async function refusal(run: () => unknown): Promise<RyeError> {
  try {
    await run();
  } catch (error) {
    if (isRyeError(error)) return error;
    throw error;
  }
  throw new Error('the ledger accepted a planted row');
}

describe('planted ledger rows', () => {
  it('refuses to register a root over a planted row with a negative spend', async () => {
    plant([['d/task-1000', null, 0, -1000, 1000, 'active']]);
    const store = openThreadStore(stateDir);
    try {
      const error = await refusal(() => store.ledger.register('d/task-1000', 1));
      expect(error.code).toBe('VALIDATION');
      expect(error.details.reason).toBe('ledger_row_exists');
      expect(error.hint).toMatch(/delete the file/);
      expect(await store.ledger.get('d/task-1000')).toMatchObject({ max_spend: 1000, actual_spend: -1000 });
    } finally {
      store.close();
    }
  });

  it('refuses a root that planted active children already name as their parent', async () => {
    // A planted active child under the future root would make reserve() skip the budget check.
    plant([['d/task-2000/k', 'd/task-2000', 0, 0, 0, 'active']]);
    const store = openThreadStore(stateDir);
    try {
      expect((await refusal(() => store.ledger.register('d/task-2000', 1))).details.reason).toBe(
        'ledger_row_exists',
      );
    } finally {
      store.close();
    }
  });

  it('refuses a child whose fresh id already names planted children', async () => {
    plant([['d/root/c/g', 'd/root/c', 0, 0, 0, 'active']]);
    const store = openThreadStore(stateDir);
    try {
      await store.ledger.register('d/root', 1);
      expect((await refusal(() => store.ledger.reserve('d/root/c', 0.5, 'd/root'))).details.reason).toBe(
        'ledger_row_exists',
      );
    } finally {
      store.close();
    }
  });

  it('never counts a negative spend or reservation as budget', async () => {
    const store = openThreadStore(stateDir);
    try {
      await store.ledger.register('d/root', 1);
      rewrite("UPDATE budget_ledger SET actual_spend = -1000 WHERE thread_id = 'd/root'");
      expect(await store.ledger.getRemaining('d/root')).toBe(1);
      await store.ledger.reserve('d/root/a', 0.5, 'd/root');
      rewrite("UPDATE budget_ledger SET reserved_spend = -1000 WHERE thread_id = 'd/root/a'");
      expect(await store.ledger.getRemaining('d/root')).toBe(1);
      await store.ledger.reserve('d/root/b', 1, 'd/root');
      await expect(store.ledger.reserve('d/root/c', 0.5, 'd/root')).rejects.toThrow(InsufficientBudget);
    } finally {
      store.close();
    }
  });
});
