/**
 * `budget_ledger.db` (spec threads §2.2): hierarchical spend. A root reserves its own limit; a
 * child reserves part of its parent's remaining budget; on finishing, the child's spend (its whole
 * subtree's) is cascaded into the parent and the unused reservation returns to it.
 *
 *   remaining(T) = COALESCE(max_spend, 0) − actual_spend − Σ reserved_spend(active children of T)
 *
 * Amounts are USD in REAL columns, as the spec's schema says. Sums of binary fractions
 * (0.5, 0.25, 0.125 …) are exact; decimal cents are not, so the affordability check forgives a
 * nano-dollar of rounding (`USD_EPSILON`): otherwise $1.00 could not be split into ten $0.10
 * children (0.1 added ten times is 0.9999999999999999). Nothing is ever rounded when stored.
 */
import { RyeError } from '@ryeos/lillux';
import { BudgetLedgerLocked, BudgetNotRegistered, InsufficientBudget } from './errors.js';
import { type Database, isBusy, nowIso, openDatabase, type Statement, type Sync } from './sqlite.js';
import type { BudgetLedger, BudgetRow, BudgetStatus, TreeSpend } from './types.js';

/** Float noise forgiven when comparing money: far below any real price. */
export const USD_EPSILON = 1e-9;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS budget_ledger (
  thread_id        TEXT PRIMARY KEY,
  parent_thread_id TEXT,
  reserved_spend   REAL NOT NULL DEFAULT 0.0,
  actual_spend     REAL NOT NULL DEFAULT 0.0,
  max_spend        REAL,
  status           TEXT NOT NULL DEFAULT 'active',
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  FOREIGN KEY (parent_thread_id) REFERENCES budget_ledger(thread_id) ON DELETE RESTRICT
);
CREATE INDEX IF NOT EXISTS idx_budget_parent ON budget_ledger(parent_thread_id);
CREATE INDEX IF NOT EXISTS idx_budget_status ON budget_ledger(status);
`;

function initLedger(db: Database): void {
  db.exec(SCHEMA);
}

const FINAL_STATUSES: readonly BudgetStatus[] = ['completed', 'error', 'cancelled'];

/** What `reportActual`/`incrementActual` tell about an overspend; the spend is still written. */
export type BudgetWarning = (
  message: string,
  details: { thread_id: string; actual: number; reserved: number },
) => void;

export class SqliteBudgetLedger implements Sync<BudgetLedger> {
  readonly db: Database;
  readonly #warn: BudgetWarning;
  readonly #sql: Record<
    | 'get'
    | 'occupied'
    | 'remaining'
    | 'purgeable'
    | 'delete'
    | 'insertRoot'
    | 'upsertChild'
    | 'increment'
    | 'report'
    | 'cascade'
    | 'cascadeRecorded'
    | 'release'
    | 'adopt'
    | 'tree',
    Statement
  >;
  readonly #reserve: (threadId: string, amount: number, parentId: string, childMax: number) => void;
  readonly #registerRoot: (threadId: string, maxSpend: number) => void;
  readonly #release: (threadId: string, status: string) => void;
  readonly #end: (threadId: string, status: string) => void;
  readonly #settle: (threadId: string, ownSpend: number, status: string) => void;

  constructor(path: string, warn: BudgetWarning = () => {}, busyTimeoutMs?: number) {
    this.db = openDatabase(path, initLedger, busyTimeoutMs);
    this.#warn = warn;
    const p = (sql: string) => this.db.prepare(sql);
    this.#sql = {
      get: p('SELECT * FROM budget_ledger WHERE thread_id = ?'),
      // A fresh id has no row and is nobody's parent yet; anything else was left or planted.
      occupied: p('SELECT 1 FROM budget_ledger WHERE thread_id = ? OR parent_thread_id = ? LIMIT 1').pluck(),
      // Negative amounts are clamped to 0: no spend the store writes is negative, so such a value
      // was planted and must never add budget.
      remaining: p(`SELECT MAX(COALESCE(bl.max_spend, 0), 0) - MAX(bl.actual_spend, 0) - COALESCE((
                      SELECT SUM(MAX(c.reserved_spend, 0)) FROM budget_ledger c
                      WHERE c.parent_thread_id = bl.thread_id AND c.status = 'active'), 0)
                    FROM budget_ledger bl WHERE bl.thread_id = ?`).pluck(),
      // Trees whose every row is final, deepest rows first: with the RESTRICT foreign key a
      // parent can only go after its children. Trees with a live row are kept whole, so another
      // root still running keeps the children its report_actual sums.
      purgeable: p(`WITH RECURSIVE tree(root, id, status, depth) AS (
                      SELECT thread_id, thread_id, status, 0 FROM budget_ledger WHERE parent_thread_id IS NULL
                      UNION ALL
                      SELECT t.root, b.thread_id, b.status, t.depth + 1
                      FROM budget_ledger b JOIN tree t ON b.parent_thread_id = t.id
                    )
                    SELECT id FROM tree WHERE root IN (
                      SELECT root FROM tree GROUP BY root HAVING SUM(status = 'active') = 0
                    ) ORDER BY depth DESC`).pluck(),
      delete: p('DELETE FROM budget_ledger WHERE thread_id = ?'),
      insertRoot: p(`INSERT OR IGNORE INTO budget_ledger
                       (thread_id, parent_thread_id, reserved_spend, actual_spend, max_spend, status, created_at, updated_at)
                     VALUES (?, NULL, ?, 0.0, ?, 'active', ?, ?)`),
      upsertChild: p(`INSERT INTO budget_ledger
                        (thread_id, parent_thread_id, reserved_spend, max_spend, status, created_at, updated_at)
                      VALUES (?, ?, ?, ?, 'active', ?, ?)
                      ON CONFLICT(thread_id) DO UPDATE SET
                        reserved_spend = excluded.reserved_spend, max_spend = excluded.max_spend,
                        status = 'active', updated_at = excluded.updated_at`),
      increment:
        p(`UPDATE budget_ledger SET actual_spend = actual_spend + ?, updated_at = ? WHERE thread_id = ?
                    RETURNING actual_spend, reserved_spend`),
      // Children still running are left out: they are about to be adopted by this thread's
      // parent (release) and cascade their whole spend there when they end.
      report: p(`UPDATE budget_ledger SET actual_spend = ? + COALESCE((
                   SELECT SUM(c.actual_spend) FROM budget_ledger c
                   WHERE c.parent_thread_id = ? AND c.status != 'active'), 0),
                   updated_at = ?
                 WHERE thread_id = ? RETURNING actual_spend, reserved_spend`),
      cascade: p(`UPDATE budget_ledger SET actual_spend = actual_spend + ?, updated_at = ?
                  WHERE thread_id = ? AND status = 'active'`),
      cascadeRecorded: p(`UPDATE budget_ledger SET actual_spend = actual_spend + COALESCE((
                            SELECT c.actual_spend FROM budget_ledger c WHERE c.thread_id = ?), 0), updated_at = ?
                          WHERE thread_id = ? AND status = 'active'`),
      release: p(
        'UPDATE budget_ledger SET reserved_spend = actual_spend, status = ?, updated_at = ? WHERE thread_id = ?',
      ),
      adopt: p(`UPDATE budget_ledger SET parent_thread_id = ?, updated_at = ?
                WHERE parent_thread_id = ? AND status = 'active'`),
      // UNION (not UNION ALL) drops rows already seen, so a cycle cannot recurse forever.
      tree: p(`WITH RECURSIVE subtree(id) AS (
                 SELECT ? UNION SELECT b.thread_id FROM budget_ledger b JOIN subtree s ON b.parent_thread_id = s.id
               )
               SELECT COALESCE(SUM(actual_spend), 0.0) AS total_actual,
                      COALESCE(SUM(reserved_spend), 0.0) AS total_reserved,
                      COUNT(*) AS thread_count,
                      COALESCE(SUM(status = 'active'), 0) AS active_count
               FROM budget_ledger WHERE thread_id IN subtree`),
    };
    this.#reserve = this.db.transaction(
      (threadId: string, amount: number, parentId: string, childMax: number) =>
        this.#reserveLocked(threadId, amount, parentId, childMax),
    ).immediate;
    // A thread that ends while children still run (async ones) hands them to its own parent:
    // their reservations keep counting against an active ancestor's budget, and their spend
    // cascades there (otherwise the finished thread's release would free budget they still hold).
    this.#release = this.db.transaction((threadId: string, status: string) => {
      this.#close(threadId, status, this.#sql.get.get(threadId) as BudgetRow | undefined);
    }).immediate;
    this.#end = this.db.transaction((threadId: string, status: string) => {
      const row = this.#sql.get.get(threadId) as BudgetRow | undefined;
      if (row?.status !== 'active') return;
      // What the row recorded spent is spent, however the thread ended: its parent pays it.
      if (row.parent_thread_id) this.#sql.cascadeRecorded.run(threadId, nowIso(), row.parent_thread_id);
      this.#close(threadId, status, row);
    }).immediate;
    this.#settle = this.db.transaction((threadId: string, ownSpend: number, status: string) => {
      const reported = this.#sql.report.get(ownSpend, threadId, nowIso(), threadId) as
        | { actual_spend: number; reserved_spend: number }
        | undefined;
      if (!reported) throw new BudgetNotRegistered(threadId);
      this.#checkOverspend(threadId, reported);
      const row = this.#sql.get.get(threadId) as BudgetRow | undefined;
      if (row?.parent_thread_id) this.#sql.cascadeRecorded.run(threadId, nowIso(), row.parent_thread_id);
      this.#close(threadId, status, row);
    }).immediate;
    this.#registerRoot = this.db.transaction((threadId: string, maxSpend: number) => {
      this.#assertFresh(threadId);
      for (const id of this.#sql.purgeable.all() as string[]) this.#sql.delete.run(id);
      const now = nowIso();
      this.#sql.insertRoot.run(threadId, maxSpend, maxSpend, now, now);
    }).immediate;
  }

  /** Ends a row: its active children go to its parent, and its unused reservation returns. */
  #close(threadId: string, status: string, row: BudgetRow | undefined): void {
    const now = nowIso();
    if (row?.parent_thread_id) this.#sql.adopt.run(row.parent_thread_id, now, threadId);
    this.#sql.release.run(status, now, threadId);
  }

  register(threadId: string, maxSpend: number): void {
    assertUsd('maxSpend', maxSpend);
    this.#locked('register', () => this.#registerRoot(threadId, maxSpend));
  }

  reserve(threadId: string, amount: number, parentId: string, childMax?: number): void {
    assertUsd('amount', amount);
    if (childMax !== undefined) assertUsd('childMax', childMax);
    this.#locked('reserve', () => this.#reserve(threadId, amount, parentId, childMax ?? amount));
  }

  /** Runs inside BEGIN IMMEDIATE: nobody else can reserve from this parent meanwhile. */
  #reserveLocked(threadId: string, amount: number, parentId: string, childMax: number): void {
    const existing = this.#sql.get.get(threadId) as BudgetRow | undefined;
    if (existing && existing.parent_thread_id !== parentId) {
      throw new RyeError(
        'VALIDATION',
        `Budget reservation failed: thread ${threadId} already has a ledger entry under ${existing.parent_thread_id ?? 'no parent (a root)'}, not ${parentId}`,
        {
          details: {
            thread_id: threadId,
            parent_thread_id: parentId,
            existing_parent: existing.parent_thread_id,
          },
        },
      );
    }
    // A detached child re-entering finds its reservation made by the parent: nothing to do
    // (the reference reserved again, against a budget its own row already consumed).
    if (existing?.status === 'active') return;
    this.#assertFresh(threadId);
    const remaining = this.#sql.remaining.get(parentId) as number | undefined;
    if (remaining === undefined) throw new BudgetNotRegistered(parentId);
    if (remaining + USD_EPSILON < amount) throw new InsufficientBudget(parentId, remaining, amount);
    const now = nowIso();
    this.#sql.upsertChild.run(threadId, parentId, amount, childMax, now, now);
  }

  incrementActual(threadId: string, delta: number): void {
    assertUsd('delta', delta);
    const row = this.#locked('incrementActual', () => this.#sql.increment.get(delta, nowIso(), threadId)) as
      | { actual_spend: number; reserved_spend: number }
      | undefined;
    if (!row) throw new BudgetNotRegistered(threadId);
    this.#checkOverspend(threadId, row);
  }

  reportActual(threadId: string, ownSpend: number): void {
    assertUsd('ownSpend', ownSpend);
    const row = this.#locked('reportActual', () =>
      this.#sql.report.get(ownSpend, threadId, nowIso(), threadId),
    ) as { actual_spend: number; reserved_spend: number } | undefined;
    if (!row) throw new BudgetNotRegistered(threadId);
    this.#checkOverspend(threadId, row);
  }

  /**
   * Adds the child's spend to the parent while the parent is active. Without `amount` the child's
   * recorded `actual_spend` is used — after `reportActual` that is its whole subtree's spend,
   * which is what the parent must carry (the reference added the child's own spend only).
   */
  cascadeSpend(childId: string, parentId: string, amount?: number): void {
    if (amount !== undefined) assertUsd('amount', amount);
    this.#locked('cascadeSpend', () =>
      amount === undefined
        ? this.#sql.cascadeRecorded.run(childId, nowIso(), parentId)
        : this.#sql.cascade.run(amount, nowIso(), parentId),
    );
  }

  release(threadId: string, status: Exclude<BudgetStatus, 'active'>): void {
    if (!FINAL_STATUSES.includes(status)) {
      throw new RyeError(
        'VALIDATION',
        `Budget release needs a final status (completed, error, cancelled), not '${status}'`,
      );
    }
    this.#locked('release', () => this.#release(threadId, status));
  }

  end(threadId: string, status: Exclude<BudgetStatus, 'active'>): void {
    if (!FINAL_STATUSES.includes(status)) {
      throw new RyeError(
        'VALIDATION',
        `Budget end needs a final status (completed, error, cancelled), not '${status}'`,
      );
    }
    this.#locked('end', () => this.#end(threadId, status));
  }

  settle(threadId: string, ownSpend: number, status: Exclude<BudgetStatus, 'active'>): void {
    assertUsd('ownSpend', ownSpend);
    if (!FINAL_STATUSES.includes(status)) {
      throw new RyeError(
        'VALIDATION',
        `Budget settle needs a final status (completed, error, cancelled), not '${status}'`,
      );
    }
    this.#locked('settle', () => this.#settle(threadId, ownSpend, status));
  }

  getRemaining(threadId: string): number {
    const remaining = this.#sql.remaining.get(threadId) as number | undefined;
    if (remaining === undefined) throw new BudgetNotRegistered(threadId);
    return remaining;
  }

  canSpawn(parentId: string, amount: number): { affordable: boolean; remaining: number; requested: number } {
    const remaining = this.getRemaining(parentId);
    return { affordable: remaining + USD_EPSILON >= amount, remaining, requested: amount };
  }

  /**
   * Raw sums over the thread and all its descendants. A finished child's spend is also in its
   * parent's `actual_spend` (cascaded), so `total_actual` counts it twice; a tree's spend is the
   * root's own `actual_spend` once its children have finished.
   */
  getTreeSpend(threadId: string): TreeSpend {
    return this.#sql.tree.get(threadId) as TreeSpend;
  }

  get(threadId: string): BudgetRow | undefined {
    return this.#sql.get.get(threadId) as BudgetRow | undefined;
  }

  close(): void {
    this.db.close();
  }

  /** A new root or child must start from a row of its own, not one a repository shipped. */
  #assertFresh(threadId: string): void {
    if (this.#sql.occupied.get(threadId, threadId) === undefined) return;
    throw new RyeError('VALIDATION', `Budget ledger already has rows for new thread ${threadId}`, {
      hint: 'The budget_ledger.db in this state folder holds rows for a thread that has not started yet; delete the file if it came with the repository, then run again.',
      details: { thread_id: threadId, reason: 'ledger_row_exists' },
    });
  }

  #checkOverspend(threadId: string, row: { actual_spend: number; reserved_spend: number }): void {
    if (row.actual_spend > row.reserved_spend + USD_EPSILON) {
      this.#warn(
        `Thread ${threadId} overspent its budget: actual $${row.actual_spend} > reserved $${row.reserved_spend}`,
        { thread_id: threadId, actual: row.actual_spend, reserved: row.reserved_spend },
      );
    }
  }

  #locked<T>(operation: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (isBusy(error)) throw new BudgetLedgerLocked(operation, error);
      throw error;
    }
  }
}

function assertUsd(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new RyeError(
      'VALIDATION',
      `Budget amount ${name} must be a finite number of USD ≥ 0, got ${value}`,
    );
  }
}
