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

// Amounts are binary fractions (0.5, 0.25, 0.125 …) so every sum is exact and compared with toBe.

let root: string;
let stateDir: string;
let store: ThreadStore;
let warnings: { message: string; details: { thread_id: string; actual: number; reserved: number } }[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'rye-ledger-'));
  stateDir = join(root, '.ai', 'state', 'threads');
  warnings = [];
  store = openThreadStore(stateDir, {
    onBudgetWarning: (message, details) => warnings.push({ message, details }),
  });
});

afterEach(() => {
  store.close();
  rmSync(root, { recursive: true, force: true });
});

function rawLedger(): Database.Database {
  return new Database(join(stateDir, 'budget_ledger.db'));
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('budget_ledger.db schema (spec threads §2.2)', () => {
  it('has the spec columns, the restricting self foreign key and the indexes', () => {
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

  it('switches foreign keys on for its connection, so a dangling parent is refused', () => {
    const { db } = store.ledger as unknown as { db: Database.Database };
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
  it('register a root with reserved = max (the reference left 0), active, ISO times', () => {
    store.ledger.register('r/r-1', 3);
    const row = store.ledger.get('r/r-1')!;
    expect(row).toMatchObject({
      thread_id: 'r/r-1',
      parent_thread_id: null,
      reserved_spend: 3,
      actual_spend: 0,
      max_spend: 3,
      status: 'active',
    });
    expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(store.ledger.getRemaining('r/r-1')).toBe(3);
  });

  it('registering again is refused and leaves the row as it was', () => {
    store.ledger.register('r/r-1', 1);
    store.ledger.incrementActual('r/r-1', 0.25);
    expect(() => store.ledger.register('r/r-1', 5)).toThrow(/already has rows/);
    expect(store.ledger.get('r/r-1')).toMatchObject({ max_spend: 1, reserved_spend: 1, actual_spend: 0.25 });
  });

  it("records a root's own spend, per turn and at the end, without a warning", () => {
    const { ledger } = store;
    ledger.register('r/r-1', 1);
    ledger.incrementActual('r/r-1', 0.125);
    ledger.incrementActual('r/r-1', 0.25);
    expect(ledger.get('r/r-1')!.actual_spend).toBe(0.375);
    expect(ledger.getRemaining('r/r-1')).toBe(0.625);
    ledger.reportActual('r/r-1', 0.5);
    ledger.release('r/r-1', 'completed');
    expect(ledger.get('r/r-1')).toMatchObject({
      actual_spend: 0.5,
      reserved_spend: 0.5,
      status: 'completed',
    });
    expect(warnings).toEqual([]);
  });

  it('logs an overspend but still writes it', () => {
    const { ledger } = store;
    ledger.register('r/r-1', 0.5);
    ledger.incrementActual('r/r-1', 0.75);
    expect(ledger.get('r/r-1')!.actual_spend).toBe(0.75);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.details).toEqual({ thread_id: 'r/r-1', actual: 0.75, reserved: 0.5 });
    expect(warnings[0]!.message).toContain('overspent');
    ledger.reportActual('r/r-1', 1);
    expect(ledger.get('r/r-1')!.actual_spend).toBe(1);
    expect(warnings).toHaveLength(2);
  });

  it('purges finished trees bottom-up when a root registers, keeping trees that are still live', () => {
    const { ledger } = store;
    // A finished three-level tree: deleting the root first would break the RESTRICT foreign key.
    ledger.register('old', 1);
    ledger.reserve('old/a', 0.5, 'old');
    ledger.reserve('old/a/b', 0.25, 'old/a');
    for (const id of ['old/a/b', 'old/a', 'old']) ledger.release(id, 'completed');
    // A live root with a finished child: its report_actual still needs that child's row.
    ledger.register('live', 1);
    ledger.reserve('live/done', 0.25, 'live');
    ledger.incrementActual('live/done', 0.125);
    ledger.release('live/done', 'completed');
    // A finished root whose detached child still runs.
    ledger.register('waiting', 1);
    ledger.reserve('waiting/child', 0.5, 'waiting');
    ledger.release('waiting', 'error');

    ledger.register('new', 2);
    for (const id of ['old', 'old/a', 'old/a/b']) expect(ledger.get(id)).toBeUndefined();
    for (const id of ['live', 'live/done', 'waiting', 'waiting/child', 'new'])
      expect(ledger.get(id)).toBeDefined();
    ledger.reportActual('live', 0.25);
    expect(ledger.get('live')!.actual_spend).toBe(0.375);
  });
});

describe('reserve', () => {
  it("reserves a child's budget from its parent", () => {
    const { ledger } = store;
    ledger.register('p', 1);
    ledger.reserve('p/c1', 0.25, 'p');
    ledger.reserve('p/c2', 0.125, 'p', 0.5);
    expect(ledger.get('p/c1')).toMatchObject({
      parent_thread_id: 'p',
      reserved_spend: 0.25,
      max_spend: 0.25,
      actual_spend: 0,
      status: 'active',
    });
    expect(ledger.get('p/c2')).toMatchObject({ reserved_spend: 0.125, max_spend: 0.5 });
    expect(ledger.getRemaining('p')).toBe(0.625);
    expect(ledger.getRemaining('p/c1')).toBe(0.25);
  });

  it('refuses an unregistered parent with BudgetNotRegistered', () => {
    const error = thrown(() => store.ledger.reserve('c', 0.25, 'ghost'));
    expect(error).toBeInstanceOf(BudgetNotRegistered);
    expect(isRyeError(error) && error.code).toBe('NOT_FOUND');
    expect((error as Error).message).toContain('ghost');
    expect(store.ledger.get('c')).toBeUndefined();
  });

  it('refuses more than the remaining budget with InsufficientBudget and writes nothing', () => {
    const { ledger } = store;
    ledger.register('p', 1);
    ledger.incrementActual('p', 0.25);
    ledger.reserve('p/c1', 0.5, 'p');
    const error = thrown(() => ledger.reserve('p/c2', 0.5, 'p'));
    expect(error).toBeInstanceOf(InsufficientBudget);
    expect(error).toMatchObject({ code: 'LIMIT', parentId: 'p', remaining: 0.25, requested: 0.5 });
    expect((error as Error).message).toBe(
      'Budget reservation failed: insufficient budget in p: remaining $0.25, requested $0.50',
    );
    expect(isRyeError(error)).toBe(true);
    expect(ledger.get('p/c2')).toBeUndefined();
    expect(ledger.canSpawn('p', 0.5)).toEqual({ affordable: false, remaining: 0.25, requested: 0.5 });
    expect(ledger.canSpawn('p', 0.25)).toEqual({ affordable: true, remaining: 0.25, requested: 0.25 });
  });

  it('is idempotent for a re-entering child, even when the parent has nothing left', () => {
    const { ledger } = store;
    ledger.register('p', 0.5);
    ledger.reserve('p/c', 0.5, 'p');
    expect(ledger.getRemaining('p')).toBe(0);
    // The detached child re-enters and reserves again: its own reservation must not block it.
    ledger.reserve('p/c', 0.5, 'p');
    expect(ledger.get('p/c')).toMatchObject({ reserved_spend: 0.5, status: 'active' });
    expect(ledger.getRemaining('p')).toBe(0);
    expect(() => ledger.reserve('p/other', 0.125, 'p')).toThrow(InsufficientBudget);
  });

  it('refuses a child id already reserved under another parent', () => {
    const { ledger } = store;
    ledger.register('a', 1);
    ledger.register('b', 1);
    ledger.reserve('c', 0.25, 'a');
    const error = thrown(() => ledger.reserve('c', 0.25, 'b'));
    expect(isRyeError(error) && error.code).toBe('VALIDATION');
    expect(ledger.get('c')!.parent_thread_id).toBe('a');
  });

  it('splits $1.00 into ten $0.10 children despite float rounding, and no more', () => {
    const { ledger } = store;
    ledger.register('p', 1);
    for (let i = 0; i < 10; i++) ledger.reserve(`p/${i}`, 0.1, 'p');
    expect(() => ledger.reserve('p/10', 0.1, 'p')).toThrow(InsufficientBudget);
    expect(() => ledger.reserve('p/10', 0.000001, 'p')).toThrow(InsufficientBudget);
  });

  it('rejects negative and non-finite amounts', () => {
    const { ledger } = store;
    ledger.register('p', 1);
    for (const bad of [-0.25, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = thrown(() => ledger.reserve('p/c', bad, 'p'));
      expect(isRyeError(error) && error.code).toBe('VALIDATION');
    }
    expect(() => ledger.register('q', -1)).toThrow(/finite number of USD/);
    expect(() => ledger.incrementActual('p', -0.5)).toThrow(/finite number of USD/);
  });

  it('reports a ledger locked past the busy timeout as BudgetLedgerLocked', () => {
    store.close();
    store = openThreadStore(stateDir, { busyTimeoutMs: 50 });
    store.ledger.register('p', 1);
    const holder = rawLedger();
    holder.exec('BEGIN IMMEDIATE');
    try {
      const error = thrown(() => store.ledger.reserve('p/c', 0.25, 'p'));
      expect(error).toBeInstanceOf(BudgetLedgerLocked);
      expect(error).toMatchObject({ code: 'UNAVAILABLE', operation: 'reserve' });
      expect(thrown(() => store.ledger.incrementActual('p', 0.25))).toMatchObject({
        operation: 'incrementActual',
      });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    store.ledger.reserve('p/c', 0.25, 'p');
    expect(store.ledger.getRemaining('p')).toBe(0.75);
  });
});

describe('spend, cascade and release', () => {
  it("report_actual is own spend plus the children's actual spend", () => {
    const { ledger } = store;
    ledger.register('p', 1);
    ledger.reserve('p/a', 0.25, 'p');
    ledger.reserve('p/b', 0.25, 'p');
    ledger.incrementActual('p/a', 0.125);
    ledger.incrementActual('p/b', 0.0625);
    ledger.release('p/a', 'completed');
    ledger.release('p/b', 'completed');
    ledger.reportActual('p', 0.5);
    expect(ledger.get('p')!.actual_spend).toBe(0.6875);
  });

  it('a thread that ends before its async child hands the child to its own parent: the tree stays within budget', () => {
    const { ledger } = store;
    ledger.register('r', 1);
    ledger.reserve('r/m', 0.5, 'r');
    ledger.reserve('r/m/c', 0.25, 'r/m');
    ledger.incrementActual('r/m', 0.125);
    ledger.incrementActual('r/m/c', 0.0625);
    // m ends while c runs: m's own spend goes up, c's reservation still counts against r.
    ledger.reportActual('r/m', 0.125);
    expect(ledger.get('r/m')!.actual_spend).toBe(0.125);
    ledger.cascadeSpend('r/m', 'r', 0.125);
    ledger.release('r/m', 'completed');
    expect(ledger.get('r/m/c')!.parent_thread_id).toBe('r');
    expect(ledger.getRemaining('r')).toBe(1 - 0.125 - 0.25);
    // c ends later: its spend reaches r once, exactly.
    ledger.incrementActual('r/m/c', 0.0625);
    ledger.reportActual('r/m/c', 0.125);
    ledger.cascadeSpend('r/m/c', 'r');
    ledger.release('r/m/c', 'completed');
    expect(ledger.get('r')!.actual_spend).toBe(0.25);
    expect(ledger.getRemaining('r')).toBe(0.75);
  });

  it("cascades a child's whole subtree into its parent, and the unused reservation returns", () => {
    const { ledger } = store;
    ledger.register('root', 1);
    ledger.reserve('root/child', 0.5, 'root');
    ledger.reserve('root/child/grand', 0.25, 'root/child');
    expect(ledger.getRemaining('root')).toBe(0.5);
    expect(ledger.getRemaining('root/child')).toBe(0.25);

    // The grandchild finishes: reportActual → cascadeSpend → release (spec §1 step 15).
    ledger.incrementActual('root/child/grand', 0.125);
    ledger.reportActual('root/child/grand', 0.125);
    ledger.cascadeSpend('root/child/grand', 'root/child');
    ledger.release('root/child/grand', 'completed');
    expect(ledger.get('root/child/grand')).toMatchObject({ reserved_spend: 0.125, status: 'completed' });
    expect(ledger.get('root/child')!.actual_spend).toBe(0.125);
    expect(ledger.getRemaining('root/child')).toBe(0.375);

    // The child spent 0.0625 itself: its subtree is 0.1875, and all of it reaches the root.
    ledger.reportActual('root/child', 0.0625);
    expect(ledger.get('root/child')!.actual_spend).toBe(0.1875);
    ledger.cascadeSpend('root/child', 'root');
    ledger.release('root/child', 'completed');
    expect(ledger.get('root')!.actual_spend).toBe(0.1875);
    expect(ledger.getRemaining('root')).toBe(0.8125);

    // The root's own final report keeps the children's share.
    ledger.reportActual('root', 0.25);
    expect(ledger.get('root')!.actual_spend).toBe(0.4375);
    ledger.release('root', 'completed');
    expect(ledger.get('root')).toMatchObject({
      reserved_spend: 0.4375,
      actual_spend: 0.4375,
      status: 'completed',
    });
  });

  it('cascades an explicit amount, and nothing into a parent that is no longer active', () => {
    const { ledger } = store;
    ledger.register('p', 1);
    ledger.reserve('p/c', 0.5, 'p');
    ledger.cascadeSpend('p/c', 'p', 0.25);
    expect(ledger.get('p')!.actual_spend).toBe(0.25);
    ledger.release('p', 'cancelled');
    ledger.cascadeSpend('p/c', 'p', 0.25);
    expect(ledger.get('p')).toMatchObject({ actual_spend: 0.25, status: 'cancelled' });
  });

  it('release needs a final status', () => {
    store.ledger.register('p', 1);
    const error = thrown(() => store.ledger.release('p', 'active' as never));
    expect(isRyeError(error) && error.code).toBe('VALIDATION');
    store.ledger.release('p', 'error');
    expect(store.ledger.get('p')!.status).toBe('error');
  });

  it('spend updates on an unknown thread are BudgetNotRegistered', () => {
    expect(() => store.ledger.incrementActual('ghost', 0.25)).toThrow(BudgetNotRegistered);
    expect(() => store.ledger.reportActual('ghost', 0.25)).toThrow(BudgetNotRegistered);
    expect(() => store.ledger.getRemaining('ghost')).toThrow(BudgetNotRegistered);
    expect(() => store.ledger.canSpawn('ghost', 0.25)).toThrow(BudgetNotRegistered);
    expect(store.ledger.get('ghost')).toBeUndefined();
  });
});

describe('queries', () => {
  it('sums a subtree with a recursive query', () => {
    const { ledger } = store;
    ledger.register('t', 2);
    ledger.reserve('t/a', 0.5, 't');
    ledger.reserve('t/b', 0.25, 't');
    ledger.reserve('t/a/x', 0.125, 't/a');
    ledger.incrementActual('t/a/x', 0.0625);
    ledger.release('t/b', 'completed');
    expect(ledger.getTreeSpend('t')).toEqual({
      total_actual: 0.0625,
      total_reserved: 2 + 0.5 + 0 + 0.125,
      thread_count: 4,
      active_count: 3,
    });
    expect(ledger.getTreeSpend('t/a')).toEqual({
      total_actual: 0.0625,
      total_reserved: 0.625,
      thread_count: 2,
      active_count: 2,
    });
    expect(ledger.getTreeSpend('ghost')).toEqual({
      total_actual: 0,
      total_reserved: 0,
      thread_count: 0,
      active_count: 0,
    });
  });

  it('remaining counts only active children', () => {
    const { ledger } = store;
    ledger.register('p', 1);
    ledger.reserve('p/a', 0.5, 'p');
    ledger.reserve('p/b', 0.25, 'p');
    expect(ledger.getRemaining('p')).toBe(0.25);
    ledger.incrementActual('p/a', 0.125);
    ledger.cascadeSpend('p/a', 'p');
    ledger.release('p/a', 'error');
    expect(ledger.getRemaining('p')).toBe(1 - 0.125 - 0.25);
  });
});
