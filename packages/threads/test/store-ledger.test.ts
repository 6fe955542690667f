import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRyeError } from '@ryeos/lillux';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BudgetLedgerLocked,
  BudgetNotRegistered,
  InsufficientBudget,
  openThreadStore,
  type ThreadStore,
} from '../src/store/index.js';
import { sqliteDatabases } from '../src/store/sqlite-store.js';

// Amounts are binary fractions (0.5, 0.25, 0.125 …) so every sum is exact and compared with toBe.

let root: string;
let stateDir: string;
let store: ThreadStore;
let warnings: { message: string; details: { thread_id: string; actual: number; reserved: number } }[];

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-ledger-'));
  stateDir = join(root, '.ai', 'state', 'threads');
  warnings = [];
  store = openThreadStore(stateDir, {
    onBudgetWarning: (message, details) => warnings.push({ message, details }),
  });
});

afterEach(async () => {
  store.close();
  rmSync(root, { recursive: true, force: true });
});

function rawLedger(): Database.Database {
  return new Database(join(stateDir, 'budget_ledger.db'));
}

async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('budget_ledger.db schema (spec threads §2.2)', () => {
  it('has the spec columns, the restricting self foreign key and the indexes', async () => {
    const db = rawLedger();
    try {
      const columns = db.pragma('table_info(budget_ledger)') as {
        name: string;
        type: string;
        notnull: number;
        dflt_value: string | null;
        pk: number;
      }[];
      expect(columns.map((c) => [c.name, c.type, c.notnull, c.dflt_value, c.pk])).toEqual([
        ['thread_id', 'TEXT', 0, null, 1],
        ['parent_thread_id', 'TEXT', 0, null, 0],
        ['reserved_spend', 'REAL', 1, '0.0', 0],
        ['actual_spend', 'REAL', 1, '0.0', 0],
        ['max_spend', 'REAL', 0, null, 0],
        ['status', 'TEXT', 1, "'active'", 0],
        ['created_at', 'TEXT', 1, null, 0],
        ['updated_at', 'TEXT', 1, null, 0],
      ]);
      expect(db.pragma('foreign_key_list(budget_ledger)')).toMatchObject([
        { table: 'budget_ledger', from: 'parent_thread_id', to: 'thread_id', on_delete: 'RESTRICT' },
      ]);
      const indexes = (db.pragma('index_list(budget_ledger)') as { name: string }[])
        .map((i) => i.name)
        .filter((name) => name.startsWith('idx_'))
        .sort();
      expect(indexes).toEqual(['idx_budget_parent', 'idx_budget_status']);
      expect((db.pragma('index_info(idx_budget_parent)') as { name: string }[])[0]!.name).toBe(
        'parent_thread_id',
      );
      expect((db.pragma('index_info(idx_budget_status)') as { name: string }[])[0]!.name).toBe('status');
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  });

  it('switches foreign keys on for its connection, so a dangling parent is refused', async () => {
    const db = sqliteDatabases(store)!.ledger as unknown as Database.Database;
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(() =>
      db
        .prepare(
          "INSERT INTO budget_ledger (thread_id, parent_thread_id, created_at, updated_at) VALUES ('c', 'ghost', 'x', 'x')",
        )
        .run(),
    ).toThrow(/FOREIGN KEY/);
  });
});

describe('roots', () => {
  it('register a root with reserved = max (the reference left 0), active, ISO times', async () => {
    await store.ledger.register('r/r-1', 3);
    const row = (await store.ledger.get('r/r-1'))!;
    expect(row).toMatchObject({
      thread_id: 'r/r-1',
      parent_thread_id: null,
      reserved_spend: 3,
      actual_spend: 0,
      max_spend: 3,
      status: 'active',
    });
    expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await store.ledger.getRemaining('r/r-1')).toBe(3);
  });

  it('registering again is refused and leaves the row as it was', async () => {
    await store.ledger.register('r/r-1', 1);
    await store.ledger.incrementActual('r/r-1', 0.25);
    await expect(store.ledger.register('r/r-1', 5)).rejects.toThrow(/already has rows/);
    expect(await store.ledger.get('r/r-1')).toMatchObject({
      max_spend: 1,
      reserved_spend: 1,
      actual_spend: 0.25,
    });
  });

  it("records a root's own spend, per turn and at the end, without a warning", async () => {
    const { ledger } = store;
    await ledger.register('r/r-1', 1);
    await ledger.incrementActual('r/r-1', 0.125);
    await ledger.incrementActual('r/r-1', 0.25);
    expect((await ledger.get('r/r-1'))!.actual_spend).toBe(0.375);
    expect(await ledger.getRemaining('r/r-1')).toBe(0.625);
    await ledger.reportActual('r/r-1', 0.5);
    await ledger.release('r/r-1', 'completed');
    expect(await ledger.get('r/r-1')).toMatchObject({
      actual_spend: 0.5,
      reserved_spend: 0.5,
      status: 'completed',
    });
    expect(warnings).toEqual([]);
  });

  it('logs an overspend but still writes it', async () => {
    const { ledger } = store;
    await ledger.register('r/r-1', 0.5);
    await ledger.incrementActual('r/r-1', 0.75);
    expect((await ledger.get('r/r-1'))!.actual_spend).toBe(0.75);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.details).toEqual({ thread_id: 'r/r-1', actual: 0.75, reserved: 0.5 });
    expect(warnings[0]!.message).toContain('overspent');
    await ledger.reportActual('r/r-1', 1);
    expect((await ledger.get('r/r-1'))!.actual_spend).toBe(1);
    expect(warnings).toHaveLength(2);
  });

  it('purges finished trees bottom-up when a root registers, keeping trees that are still live', async () => {
    const { ledger } = store;
    // A finished three-level tree: deleting the root first would break the RESTRICT foreign key.
    await ledger.register('old', 1);
    await ledger.reserve('old/a', 0.5, 'old');
    await ledger.reserve('old/a/b', 0.25, 'old/a');
    for (const id of ['old/a/b', 'old/a', 'old']) await ledger.release(id, 'completed');
    // A live root with a finished child: its report_actual still needs that child's row.
    await ledger.register('live', 1);
    await ledger.reserve('live/done', 0.25, 'live');
    await ledger.incrementActual('live/done', 0.125);
    await ledger.release('live/done', 'completed');
    // A finished root whose detached child still runs.
    await ledger.register('waiting', 1);
    await ledger.reserve('waiting/child', 0.5, 'waiting');
    await ledger.release('waiting', 'error');

    await ledger.register('new', 2);
    for (const id of ['old', 'old/a', 'old/a/b']) expect(await ledger.get(id)).toBeUndefined();
    for (const id of ['live', 'live/done', 'waiting', 'waiting/child', 'new'])
      expect(await ledger.get(id)).toBeDefined();
    await ledger.reportActual('live', 0.25);
    expect((await ledger.get('live'))!.actual_spend).toBe(0.375);
  });
});

describe('reserve', () => {
  it("reserves a child's budget from its parent", async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    await ledger.reserve('p/c1', 0.25, 'p');
    await ledger.reserve('p/c2', 0.125, 'p', 0.5);
    expect(await ledger.get('p/c1')).toMatchObject({
      parent_thread_id: 'p',
      reserved_spend: 0.25,
      max_spend: 0.25,
      actual_spend: 0,
      status: 'active',
    });
    expect(await ledger.get('p/c2')).toMatchObject({ reserved_spend: 0.125, max_spend: 0.5 });
    expect(await ledger.getRemaining('p')).toBe(0.625);
    expect(await ledger.getRemaining('p/c1')).toBe(0.25);
  });

  it('refuses an unregistered parent with BudgetNotRegistered', async () => {
    const error = await thrown(() => store.ledger.reserve('c', 0.25, 'ghost'));
    expect(error).toBeInstanceOf(BudgetNotRegistered);
    expect(isRyeError(error) && error.code).toBe('NOT_FOUND');
    expect((error as Error).message).toContain('ghost');
    expect(await store.ledger.get('c')).toBeUndefined();
  });

  it('refuses more than the remaining budget with InsufficientBudget and writes nothing', async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    await ledger.incrementActual('p', 0.25);
    await ledger.reserve('p/c1', 0.5, 'p');
    const error = await thrown(() => ledger.reserve('p/c2', 0.5, 'p'));
    expect(error).toBeInstanceOf(InsufficientBudget);
    expect(error).toMatchObject({ code: 'LIMIT', parentId: 'p', remaining: 0.25, requested: 0.5 });
    expect((error as Error).message).toBe(
      'Budget reservation failed: insufficient budget in p: remaining $0.25, requested $0.50',
    );
    expect(isRyeError(error)).toBe(true);
    expect(await ledger.get('p/c2')).toBeUndefined();
    expect(await ledger.canSpawn('p', 0.5)).toEqual({ affordable: false, remaining: 0.25, requested: 0.5 });
    expect(await ledger.canSpawn('p', 0.25)).toEqual({ affordable: true, remaining: 0.25, requested: 0.25 });
  });

  it('is idempotent for a re-entering child, even when the parent has nothing left', async () => {
    const { ledger } = store;
    await ledger.register('p', 0.5);
    await ledger.reserve('p/c', 0.5, 'p');
    expect(await ledger.getRemaining('p')).toBe(0);
    // The detached child re-enters and reserves again: its own reservation must not block it.
    await ledger.reserve('p/c', 0.5, 'p');
    expect(await ledger.get('p/c')).toMatchObject({ reserved_spend: 0.5, status: 'active' });
    expect(await ledger.getRemaining('p')).toBe(0);
    await expect(ledger.reserve('p/other', 0.125, 'p')).rejects.toThrow(InsufficientBudget);
  });

  it('refuses a child id already reserved under another parent', async () => {
    const { ledger } = store;
    await ledger.register('a', 1);
    await ledger.register('b', 1);
    await ledger.reserve('c', 0.25, 'a');
    const error = await thrown(() => ledger.reserve('c', 0.25, 'b'));
    expect(isRyeError(error) && error.code).toBe('VALIDATION');
    expect((await ledger.get('c'))!.parent_thread_id).toBe('a');
  });

  it('splits $1.00 into ten $0.10 children despite float rounding, and no more', async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    for (let i = 0; i < 10; i++) await ledger.reserve(`p/${i}`, 0.1, 'p');
    await expect(ledger.reserve('p/10', 0.1, 'p')).rejects.toThrow(InsufficientBudget);
    await expect(ledger.reserve('p/10', 0.000001, 'p')).rejects.toThrow(InsufficientBudget);
  });

  it('rejects negative and non-finite amounts', async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    for (const bad of [-0.25, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = await thrown(() => ledger.reserve('p/c', bad, 'p'));
      expect(isRyeError(error) && error.code).toBe('VALIDATION');
    }
    await expect(ledger.register('q', -1)).rejects.toThrow(/finite number of USD/);
    await expect(ledger.incrementActual('p', -0.5)).rejects.toThrow(/finite number of USD/);
  });

  it('reports a ledger locked past the busy timeout as BudgetLedgerLocked', async () => {
    store.close();
    store = openThreadStore(stateDir, { busyTimeoutMs: 50 });
    await store.ledger.register('p', 1);
    const holder = rawLedger();
    holder.exec('BEGIN IMMEDIATE');
    try {
      const error = await thrown(() => store.ledger.reserve('p/c', 0.25, 'p'));
      expect(error).toBeInstanceOf(BudgetLedgerLocked);
      expect(error).toMatchObject({ code: 'UNAVAILABLE', operation: 'reserve' });
      expect(await thrown(() => store.ledger.incrementActual('p', 0.25))).toMatchObject({
        operation: 'incrementActual',
      });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    await store.ledger.reserve('p/c', 0.25, 'p');
    expect(await store.ledger.getRemaining('p')).toBe(0.75);
  });
});

describe('spend, cascade and release', () => {
  it("report_actual is own spend plus the children's actual spend", async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    await ledger.reserve('p/a', 0.25, 'p');
    await ledger.reserve('p/b', 0.25, 'p');
    await ledger.incrementActual('p/a', 0.125);
    await ledger.incrementActual('p/b', 0.0625);
    await ledger.release('p/a', 'completed');
    await ledger.release('p/b', 'completed');
    await ledger.reportActual('p', 0.5);
    expect((await ledger.get('p'))!.actual_spend).toBe(0.6875);
  });

  it('a thread that ends before its async child hands the child to its own parent: the tree stays within budget', async () => {
    const { ledger } = store;
    await ledger.register('r', 1);
    await ledger.reserve('r/m', 0.5, 'r');
    await ledger.reserve('r/m/c', 0.25, 'r/m');
    await ledger.incrementActual('r/m', 0.125);
    await ledger.incrementActual('r/m/c', 0.0625);
    // m ends while c runs: m's own spend goes up, c's reservation still counts against r.
    await ledger.reportActual('r/m', 0.125);
    expect((await ledger.get('r/m'))!.actual_spend).toBe(0.125);
    await ledger.cascadeSpend('r/m', 'r', 0.125);
    await ledger.release('r/m', 'completed');
    expect((await ledger.get('r/m/c'))!.parent_thread_id).toBe('r');
    expect(await ledger.getRemaining('r')).toBe(1 - 0.125 - 0.25);
    // c ends later: its spend reaches r once, exactly.
    await ledger.incrementActual('r/m/c', 0.0625);
    await ledger.reportActual('r/m/c', 0.125);
    await ledger.cascadeSpend('r/m/c', 'r');
    await ledger.release('r/m/c', 'completed');
    expect((await ledger.get('r'))!.actual_spend).toBe(0.25);
    expect(await ledger.getRemaining('r')).toBe(0.75);
  });

  it("cascades a child's whole subtree into its parent, and the unused reservation returns", async () => {
    const { ledger } = store;
    await ledger.register('root', 1);
    await ledger.reserve('root/child', 0.5, 'root');
    await ledger.reserve('root/child/grand', 0.25, 'root/child');
    expect(await ledger.getRemaining('root')).toBe(0.5);
    expect(await ledger.getRemaining('root/child')).toBe(0.25);

    // The grandchild finishes: reportActual → cascadeSpend → release (spec §1 step 15).
    await ledger.incrementActual('root/child/grand', 0.125);
    await ledger.reportActual('root/child/grand', 0.125);
    await ledger.cascadeSpend('root/child/grand', 'root/child');
    await ledger.release('root/child/grand', 'completed');
    expect(await ledger.get('root/child/grand')).toMatchObject({
      reserved_spend: 0.125,
      status: 'completed',
    });
    expect((await ledger.get('root/child'))!.actual_spend).toBe(0.125);
    expect(await ledger.getRemaining('root/child')).toBe(0.375);

    // The child spent 0.0625 itself: its subtree is 0.1875, and all of it reaches the root.
    await ledger.reportActual('root/child', 0.0625);
    expect((await ledger.get('root/child'))!.actual_spend).toBe(0.1875);
    await ledger.cascadeSpend('root/child', 'root');
    await ledger.release('root/child', 'completed');
    expect((await ledger.get('root'))!.actual_spend).toBe(0.1875);
    expect(await ledger.getRemaining('root')).toBe(0.8125);

    // The root's own final report keeps the children's share.
    await ledger.reportActual('root', 0.25);
    expect((await ledger.get('root'))!.actual_spend).toBe(0.4375);
    await ledger.release('root', 'completed');
    expect(await ledger.get('root')).toMatchObject({
      reserved_spend: 0.4375,
      actual_spend: 0.4375,
      status: 'completed',
    });
  });

  it('cascades an explicit amount, and nothing into a parent that is no longer active', async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    await ledger.reserve('p/c', 0.5, 'p');
    await ledger.cascadeSpend('p/c', 'p', 0.25);
    expect((await ledger.get('p'))!.actual_spend).toBe(0.25);
    await ledger.release('p', 'cancelled');
    await ledger.cascadeSpend('p/c', 'p', 0.25);
    expect(await ledger.get('p')).toMatchObject({ actual_spend: 0.25, status: 'cancelled' });
  });

  it('release needs a final status', async () => {
    await store.ledger.register('p', 1);
    const error = await thrown(() => store.ledger.release('p', 'active' as never));
    expect(isRyeError(error) && error.code).toBe('VALIDATION');
    await store.ledger.release('p', 'error');
    expect((await store.ledger.get('p'))!.status).toBe('error');
  });

  it('spend updates on an unknown thread are BudgetNotRegistered', async () => {
    await expect(store.ledger.incrementActual('ghost', 0.25)).rejects.toThrow(BudgetNotRegistered);
    await expect(store.ledger.reportActual('ghost', 0.25)).rejects.toThrow(BudgetNotRegistered);
    await expect(store.ledger.getRemaining('ghost')).rejects.toThrow(BudgetNotRegistered);
    await expect(store.ledger.canSpawn('ghost', 0.25)).rejects.toThrow(BudgetNotRegistered);
    expect(await store.ledger.get('ghost')).toBeUndefined();
  });
});

describe('queries', () => {
  it('sums a subtree with a recursive query', async () => {
    const { ledger } = store;
    await ledger.register('t', 2);
    await ledger.reserve('t/a', 0.5, 't');
    await ledger.reserve('t/b', 0.25, 't');
    await ledger.reserve('t/a/x', 0.125, 't/a');
    await ledger.incrementActual('t/a/x', 0.0625);
    await ledger.release('t/b', 'completed');
    expect(await ledger.getTreeSpend('t')).toEqual({
      total_actual: 0.0625,
      total_reserved: 2 + 0.5 + 0 + 0.125,
      thread_count: 4,
      active_count: 3,
    });
    expect(await ledger.getTreeSpend('t/a')).toEqual({
      total_actual: 0.0625,
      total_reserved: 0.625,
      thread_count: 2,
      active_count: 2,
    });
    expect(await ledger.getTreeSpend('ghost')).toEqual({
      total_actual: 0,
      total_reserved: 0,
      thread_count: 0,
      active_count: 0,
    });
  });

  it('remaining counts only active children', async () => {
    const { ledger } = store;
    await ledger.register('p', 1);
    await ledger.reserve('p/a', 0.5, 'p');
    await ledger.reserve('p/b', 0.25, 'p');
    expect(await ledger.getRemaining('p')).toBe(0.25);
    await ledger.incrementActual('p/a', 0.125);
    await ledger.cascadeSpend('p/a', 'p');
    await ledger.release('p/a', 'error');
    expect(await ledger.getRemaining('p')).toBe(1 - 0.125 - 0.25);
  });
});
