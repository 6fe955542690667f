/**
 * The budget ledger on Postgres: the same hierarchy and arithmetic as the embedded SQLite ledger
 * (`remaining(T) = max − actual − Σ reserved of active children`), with amounts in `numeric`.
 * Every change that reads before it writes is one call of a function the migrations define
 * (schema.ts), run as one transaction that first locks the row it depends on (`SELECT … FOR
 * UPDATE`): a parent's row for a reservation, the ending thread's row for a settle. One round trip
 * each, so a row lock is held for microseconds and workers on any machine see the same budget.
 */
import { RyeError } from '@ryeos/lillux';
import {
  type BudgetLedger,
  BudgetNotRegistered,
  type BudgetRow,
  type BudgetStatus,
  InsufficientBudget,
} from '@ryeos/threads';
import type { PoolClient } from 'pg';
import type { Db } from './db.js';
import { assertUsd, fromNumeric, toNumeric, USD_EPSILON } from './money.js';

type TreeSpend = Awaited<ReturnType<BudgetLedger['getTreeSpend']>>;

const FINAL_STATUSES: readonly BudgetStatus[] = ['completed', 'error', 'cancelled'];

/** What a spend past a thread's reservation is told to; the spend is still written. */
export type BudgetWarning = (
  message: string,
  details: { thread_id: string; actual: number; reserved: number },
) => void;

interface RawBudgetRow {
  thread_id: string;
  parent_thread_id: string | null;
  reserved_spend: string;
  actual_spend: string;
  max_spend: string | null;
  status: BudgetStatus;
  created_at: Date;
  updated_at: Date;
}

const BUDGET_COLUMNS =
  'thread_id, parent_thread_id, reserved_spend, actual_spend, max_spend, status, created_at, updated_at';

function toBudgetRow(raw: RawBudgetRow): BudgetRow {
  return {
    ...raw,
    reserved_spend: fromNumeric(raw.reserved_spend),
    actual_spend: fromNumeric(raw.actual_spend),
    max_spend: raw.max_spend === null ? null : fromNumeric(raw.max_spend),
    created_at: raw.created_at.toISOString(),
    updated_at: raw.updated_at.toISOString(),
  };
}

export interface LedgerContext {
  db: Db;
  /** The quoted schema. */
  s: string;
  project: string;
  warn: BudgetWarning;
}

export class PostgresBudgetLedger implements BudgetLedger {
  readonly #c: LedgerContext;

  constructor(context: LedgerContext) {
    this.#c = context;
  }

  /** One statement on a transaction's connection (or the pool), `{s}` the schema, $1 the project. */
  #q<R = Record<string, unknown>>(
    operation: string,
    client: PoolClient | undefined,
    sql: string,
    params: unknown[],
  ): Promise<R[]> {
    const text = sql.replaceAll('{s}', this.#c.s);
    const values = [this.#c.project, ...params];
    if (client) return client.query(text, values).then((r) => r.rows as R[]);
    return this.#c.db.query<R>('ledger', operation, text, values);
  }

  #tx<T>(operation: string, body: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.#c.db.transaction('ledger', operation, body);
  }

  async #remaining(threadId: string): Promise<number | undefined> {
    // A thread without a row has no budget: answered as no row, not as a remaining of 0.
    const rows = await this.#q<{ remaining: string | null; found: boolean }>(
      'getRemaining',
      undefined,
      'SELECT {s}.budget_remaining($1, $2) AS remaining, EXISTS (SELECT 1 FROM {s}.budget_ledger WHERE project = $1 AND thread_id = $2) AS found',
      [threadId],
    );
    return rows[0]?.found ? fromNumeric(rows[0].remaining) : undefined;
  }

  /** A new root or child must start from a row of its own, not one left by someone else. */
  async #assertFresh(client: PoolClient, threadId: string): Promise<void> {
    const rows = await this.#q(
      'register',
      client,
      'SELECT 1 FROM {s}.budget_ledger WHERE project = $1 AND (thread_id = $2 OR parent_thread_id = $2) LIMIT 1',
      [threadId],
    );
    if (rows.length > 0) throw ledgerRowExists(threadId);
  }

  async register(threadId: string, maxSpend: number): Promise<void> {
    assertUsd('maxSpend', maxSpend);
    await this.#tx('register', async (client) => {
      // Registrations of one project queue here, so two purges never race over the same trees.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `ryeos-ledger:${this.#c.s}:${this.#c.project}`,
      ]);
      await this.#assertFresh(client, threadId);
      await this.#purgeFinishedTrees(client);
      await this.#q(
        'register',
        client,
        `INSERT INTO {s}.budget_ledger
           (project, thread_id, parent_thread_id, reserved_spend, actual_spend, max_spend, status, created_at, updated_at)
         VALUES ($1, $2, NULL, $3, 0, $3, 'active', now(), now()) ON CONFLICT DO NOTHING`,
        [threadId, toNumeric(maxSpend)],
      );
    });
  }

  /**
   * Deletes the trees whose every row is final, deepest rows first (the RESTRICT foreign key
   * wants children gone before their parent); a tree with a live row is kept whole.
   */
  async #purgeFinishedTrees(client: PoolClient): Promise<void> {
    const ids = await this.#q<{ id: string }>(
      'register',
      client,
      `WITH RECURSIVE tree(root, id, status, depth) AS (
         SELECT thread_id, thread_id, status, 0 FROM {s}.budget_ledger WHERE project = $1 AND parent_thread_id IS NULL
         UNION ALL
         SELECT t.root, b.thread_id, b.status, t.depth + 1
         FROM {s}.budget_ledger b JOIN tree t ON b.project = $1 AND b.parent_thread_id = t.id
       )
       SELECT id FROM tree WHERE root IN (
         SELECT root FROM tree GROUP BY root HAVING COUNT(*) FILTER (WHERE status = 'active') = 0
       ) ORDER BY depth DESC`,
      [],
    );
    for (const { id } of ids) {
      await this.#q(
        'register',
        client,
        'DELETE FROM {s}.budget_ledger WHERE project = $1 AND thread_id = $2',
        [id],
      );
    }
  }

  async reserve(threadId: string, amount: number, parentId: string, childMax?: number): Promise<void> {
    assertUsd('amount', amount);
    if (childMax !== undefined) assertUsd('childMax', childMax);
    const [result] = await this.#q<{
      outcome: string;
      remaining: string | null;
      existing_parent: string | null;
    }>('reserve', undefined, 'SELECT * FROM {s}.budget_reserve($1, $2, $3, $4, $5, $6)', [
      threadId,
      toNumeric(amount),
      parentId,
      toNumeric(childMax ?? amount),
      toNumeric(USD_EPSILON),
    ]);
    switch (result?.outcome) {
      case 'reserved':
      case 'exists':
        return;
      case 'wrong_parent':
        throw new RyeError(
          'VALIDATION',
          `Budget reservation failed: thread ${threadId} already has a ledger entry under ${result.existing_parent ?? 'no parent (a root)'}, not ${parentId}`,
          {
            details: {
              thread_id: threadId,
              parent_thread_id: parentId,
              existing_parent: result.existing_parent,
            },
          },
        );
      case 'occupied':
        throw ledgerRowExists(threadId);
      case 'no_parent':
        throw new BudgetNotRegistered(parentId);
      default:
        throw new InsufficientBudget(parentId, fromNumeric(result?.remaining ?? null), amount);
    }
  }

  async incrementActual(threadId: string, delta: number): Promise<void> {
    assertUsd('delta', delta);
    const rows = await this.#q<{ actual_spend: string; reserved_spend: string }>(
      'incrementActual',
      undefined,
      `UPDATE {s}.budget_ledger SET actual_spend = actual_spend + $3, updated_at = now()
       WHERE project = $1 AND thread_id = $2 RETURNING actual_spend, reserved_spend`,
      [threadId, toNumeric(delta)],
    );
    if (!rows[0]) throw new BudgetNotRegistered(threadId);
    this.#checkOverspend(threadId, rows[0]);
  }

  /**
   * `actual = own + Σ finished children's actual`, never lower than what was recorded as it came
   * (another run of the thread charged its own responses). Children still running are left out: they are
   * about to be adopted by this thread's parent and cascade their whole spend there when they end.
   */
  async #report(threadId: string, ownSpend: number): Promise<void> {
    const rows = await this.#q<{ actual_spend: string; reserved_spend: string }>(
      'reportActual',
      undefined,
      `UPDATE {s}.budget_ledger SET actual_spend = GREATEST(actual_spend, $3 + COALESCE((
         SELECT SUM(c.actual_spend) FROM {s}.budget_ledger c
         WHERE c.project = $1 AND c.parent_thread_id = $2 AND c.status <> 'active'), 0)),
         updated_at = now()
       WHERE project = $1 AND thread_id = $2 RETURNING actual_spend, reserved_spend`,
      [threadId, toNumeric(ownSpend)],
    );
    if (!rows[0]) throw new BudgetNotRegistered(threadId);
    this.#checkOverspend(threadId, rows[0]);
  }

  async reportActual(threadId: string, ownSpend: number): Promise<void> {
    assertUsd('ownSpend', ownSpend);
    await this.#report(threadId, ownSpend);
  }

  /** Adds `childId`'s recorded spend (or `amount`) to `parentId` while the parent is active. */
  async #cascade(childId: string, parentId: string, amount?: number): Promise<void> {
    if (amount !== undefined) {
      await this.#q(
        'cascadeSpend',
        undefined,
        `UPDATE {s}.budget_ledger SET actual_spend = actual_spend + $3, updated_at = now()
         WHERE project = $1 AND thread_id = $2 AND status = 'active'`,
        [parentId, toNumeric(amount)],
      );
      return;
    }
    await this.#q(
      'cascadeSpend',
      undefined,
      `UPDATE {s}.budget_ledger SET actual_spend = actual_spend + COALESCE((
         SELECT c.actual_spend FROM {s}.budget_ledger c WHERE c.project = $1 AND c.thread_id = $3), 0),
         updated_at = now()
       WHERE project = $1 AND thread_id = $2 AND status = 'active'`,
      [parentId, childId],
    );
  }

  async cascadeSpend(childId: string, parentId: string, amount?: number): Promise<void> {
    if (amount !== undefined) assertUsd('amount', amount);
    await this.#cascade(childId, parentId, amount);
  }

  async release(threadId: string, status: Exclude<BudgetStatus, 'active'>): Promise<void> {
    assertFinal('release', status);
    await this.#q('release', undefined, 'SELECT {s}.budget_release($1, $2, $3)', [threadId, status]);
  }

  async end(threadId: string, status: Exclude<BudgetStatus, 'active'>): Promise<void> {
    assertFinal('end', status);
    await this.#q('end', undefined, 'SELECT {s}.budget_end($1, $2, $3)', [threadId, status]);
  }

  /** `end` inside a transaction the caller runs (stale marking fails a thread and ends its row at once). */
  async endIn(client: PoolClient, threadId: string, status: Exclude<BudgetStatus, 'active'>): Promise<void> {
    await this.#q('endIn', client, 'SELECT {s}.budget_end($1, $2, $3)', [threadId, status]);
  }

  async settle(threadId: string, ownSpend: number, status: Exclude<BudgetStatus, 'active'>): Promise<void> {
    assertUsd('ownSpend', ownSpend);
    assertFinal('settle', status);
    const [settled] = await this.#q<{ actual_spend: string; reserved_spend: string }>(
      'settle',
      undefined,
      'SELECT * FROM {s}.budget_settle($1, $2, $3, $4)',
      [threadId, toNumeric(ownSpend), status],
    );
    if (!settled) throw new BudgetNotRegistered(threadId);
    this.#checkOverspend(threadId, settled);
  }

  async getRemaining(threadId: string): Promise<number> {
    const remaining = await this.#remaining(threadId);
    if (remaining === undefined) throw new BudgetNotRegistered(threadId);
    return remaining;
  }

  async canSpawn(
    parentId: string,
    amount: number,
  ): Promise<{ affordable: boolean; remaining: number; requested: number }> {
    const remaining = await this.getRemaining(parentId);
    return { affordable: remaining + USD_EPSILON >= amount, remaining, requested: amount };
  }

  /** Raw sums over the thread and all its descendants (a finished child's spend counts twice). */
  async getTreeSpend(threadId: string): Promise<TreeSpend> {
    const rows = await this.#q<{
      total_actual: string;
      total_reserved: string;
      thread_count: string;
      active_count: string;
    }>(
      'getTreeSpend',
      undefined,
      `WITH RECURSIVE subtree(id) AS (
         SELECT $2::text UNION
         SELECT b.thread_id FROM {s}.budget_ledger b JOIN subtree t ON b.project = $1 AND b.parent_thread_id = t.id
       )
       SELECT COALESCE(SUM(actual_spend), 0) AS total_actual, COALESCE(SUM(reserved_spend), 0) AS total_reserved,
              COUNT(*) AS thread_count, COUNT(*) FILTER (WHERE status = 'active') AS active_count
       FROM {s}.budget_ledger WHERE project = $1 AND thread_id IN (SELECT id FROM subtree)`,
      [threadId],
    );
    const row = rows[0]!;
    return {
      total_actual: fromNumeric(row.total_actual),
      total_reserved: fromNumeric(row.total_reserved),
      thread_count: Number(row.thread_count),
      active_count: Number(row.active_count),
    };
  }

  async get(threadId: string): Promise<BudgetRow | undefined> {
    const rows = await this.#q<RawBudgetRow>(
      'get',
      undefined,
      `SELECT ${BUDGET_COLUMNS} FROM {s}.budget_ledger WHERE project = $1 AND thread_id = $2`,
      [threadId],
    );
    return rows[0] && toBudgetRow(rows[0]);
  }

  #checkOverspend(threadId: string, raw: { actual_spend: string; reserved_spend: string }): void {
    const actual = fromNumeric(raw.actual_spend);
    const reserved = fromNumeric(raw.reserved_spend);
    if (actual > reserved + USD_EPSILON) {
      this.#c.warn(`Thread ${threadId} overspent its budget: actual $${actual} > reserved $${reserved}`, {
        thread_id: threadId,
        actual,
        reserved,
      });
    }
  }
}

function ledgerRowExists(threadId: string): RyeError {
  return new RyeError('VALIDATION', `Budget ledger already has rows for new thread ${threadId}`, {
    hint: 'The budget ledger holds rows for a thread that has not started yet; pick a fresh thread id.',
    details: { thread_id: threadId, reason: 'ledger_row_exists' },
  });
}

function assertFinal(operation: string, status: string): void {
  if (!FINAL_STATUSES.includes(status as BudgetStatus)) {
    throw new RyeError(
      'VALIDATION',
      `Budget ${operation} needs a final status (completed, error, cancelled), not '${status}'`,
    );
  }
}
