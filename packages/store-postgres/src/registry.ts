/**
 * The registry on Postgres: the `threads` table, one project's rows at a time. Every counter and
 * claim is one statement, so concurrent workers never read-modify-write in JavaScript; every write
 * fires the table's trigger, which wakes the stores waiting for a change.
 */
import type { ThreadCost, ThreadRegistry, ThreadRow, ThreadStatus } from '@ryeos/threads';
import type { Db } from './db.js';
import { isUniqueViolation, ThreadAlreadyRegistered, translate } from './errors.js';
import { fromNumeric, toNumeric } from './money.js';

/** The columns of a `ThreadRow`, in the order the embedded store has them. */
export const ROW_COLUMNS = `thread_id, directive, parent_id, status, created_at, updated_at, completed_at, result,
  turns, input_tokens, output_tokens, spawn_count, spend, pid, model, continuation_of,
  continuation_thread_id, chain_root_id`;

/** The statuses a thread ends in (`@ryeos/threads` keeps the same list). */
const TERMINAL_STATUSES: readonly ThreadStatus[] = ['completed', 'error', 'cancelled', 'continued'];
const TERMINAL_SQL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');
/** Newest first; `seq` breaks ties between rows created in the same transaction time. */
const NEWEST_FIRST = 'ORDER BY created_at DESC, seq DESC';

interface RawRow {
  thread_id: string;
  directive: string;
  parent_id: string | null;
  status: ThreadStatus;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  result: string | null;
  turns: number;
  input_tokens: string;
  output_tokens: string;
  spawn_count: number;
  spend: string;
  pid: number | null;
  model: string | null;
  continuation_of: string | null;
  continuation_thread_id: string | null;
  chain_root_id: string | null;
}

export function toRow(raw: RawRow): ThreadRow {
  return {
    ...raw,
    created_at: raw.created_at.toISOString(),
    updated_at: raw.updated_at.toISOString(),
    completed_at: raw.completed_at?.toISOString() ?? null,
    result: parseResult(raw.result),
    input_tokens: Number(raw.input_tokens),
    output_tokens: Number(raw.output_tokens),
    spend: fromNumeric(raw.spend),
  };
}

/** A result the store did not write (edited by hand, truncated) is kept as text, not thrown on. */
function parseResult(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    return { unparsed: text };
  }
}

export interface RegistryContext {
  db: Db;
  /** The quoted schema. */
  s: string;
  project: string;
  /** The worker this store's process runs as; null for a process tracked by its pid. */
  workerId: string | null;
}

export class PostgresThreadRegistry implements ThreadRegistry {
  readonly #c: RegistryContext;

  constructor(context: RegistryContext) {
    this.#c = context;
  }

  async #rows(operation: string, where: string, params: unknown[], tail = ''): Promise<ThreadRow[]> {
    const { db, s, project } = this.#c;
    const rows = await db.query<RawRow>(
      'registry',
      operation,
      `SELECT ${ROW_COLUMNS} FROM ${s}.threads WHERE project = $1 ${where} ${tail}`,
      [project, ...params],
    );
    return rows.map(toRow);
  }

  /** Runs an UPDATE/DELETE on this project's rows and answers how many it changed. */
  async #change(operation: string, sql: string, params: unknown[]): Promise<number> {
    const { db, s, project } = this.#c;
    try {
      const result = await db.pool.query(sql.replaceAll('{t}', `${s}.threads`), [project, ...params]);
      return result.rowCount ?? 0;
    } catch (error) {
      throw translate('registry', operation, error, db.secret);
    }
  }

  async register(threadId: string, directive: string, parentId: string | null = null): Promise<void> {
    const { db, s, project, workerId } = this.#c;
    try {
      await db.pool.query(
        `INSERT INTO ${s}.threads (project, thread_id, directive, parent_id, status, created_at, updated_at, pid, worker_id)
         VALUES ($1, $2, $3, $4, 'created', now(), now(), $5, $6)`,
        [project, threadId, directive, parentId, process.pid, workerId],
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw new ThreadAlreadyRegistered(threadId);
      throw translate('registry', 'register', error, db.secret);
    }
  }

  async exists(threadId: string): Promise<boolean> {
    const { db, s, project } = this.#c;
    const rows = await db.query(
      'registry',
      'exists',
      `SELECT 1 FROM ${s}.threads WHERE project = $1 AND thread_id = $2`,
      [project, threadId],
    );
    return rows.length > 0;
  }

  async updatePid(threadId: string, pid: number): Promise<void> {
    await this.#change(
      'updatePid',
      'UPDATE {t} SET pid = $3, worker_id = $4, updated_at = now() WHERE project = $1 AND thread_id = $2',
      [threadId, pid, this.#c.workerId],
    );
  }

  async takeRun(threadId: string, pid: number): Promise<number | undefined> {
    const { db, s, project, workerId } = this.#c;
    try {
      const { rows } = await db.pool.query<{ run_epoch: string }>(
        `UPDATE ${s}.threads SET run_epoch = run_epoch + 1, pid = $3, worker_id = $4, updated_at = now()
         WHERE project = $1 AND thread_id = $2 AND status = 'running' RETURNING run_epoch`,
        [project, threadId, pid, workerId],
      );
      return rows[0] ? Number(rows[0].run_epoch) : undefined;
    } catch (error) {
      throw translate('registry', 'takeRun', error, db.secret);
    }
  }

  async holdsRun(threadId: string, epoch: number): Promise<boolean> {
    const { db, s, project } = this.#c;
    try {
      const { rows } = await db.pool.query(
        `SELECT 1 FROM ${s}.threads WHERE project = $1 AND thread_id = $2 AND status = 'running' AND run_epoch = $3`,
        [project, threadId, epoch],
      );
      return rows.length > 0;
    } catch (error) {
      throw translate('registry', 'holdsRun', error, db.secret);
    }
  }

  async markQueued(threadId: string): Promise<void> {
    await this.#change(
      'markQueued',
      `UPDATE {t} SET pid = NULL, worker_id = NULL, updated_at = now()
       WHERE project = $1 AND thread_id = $2 AND status = 'running'`,
      [threadId],
    );
  }

  async claimPid(threadId: string, expected: number | null, pid: number): Promise<boolean> {
    const changed = await this.#change(
      'claimPid',
      `UPDATE {t} SET pid = $3, worker_id = $5, updated_at = now()
       WHERE project = $1 AND thread_id = $2 AND status = 'running' AND pid IS NOT DISTINCT FROM $4::integer`,
      [threadId, pid, expected, this.#c.workerId],
    );
    return changed === 1;
  }

  async updateStatus(threadId: string, status: ThreadStatus): Promise<void> {
    const terminal = TERMINAL_STATUSES.includes(status);
    await this.#change(
      'updateStatus',
      `UPDATE {t} SET status = $3, updated_at = now()${terminal ? ', completed_at = now()' : ''}
       WHERE project = $1 AND thread_id = $2`,
      [threadId, status],
    );
  }

  async setModel(threadId: string, model: string): Promise<void> {
    await this.#change(
      'setModel',
      'UPDATE {t} SET model = $3, updated_at = now() WHERE project = $1 AND thread_id = $2',
      [threadId, model],
    );
  }

  async getThread(threadId: string): Promise<ThreadRow | undefined> {
    return (await this.#rows('getThread', 'AND thread_id = $2', [threadId]))[0];
  }

  async setResult(threadId: string, result: Record<string, unknown>): Promise<void> {
    await this.#change(
      'setResult',
      'UPDATE {t} SET result = $3, updated_at = now() WHERE project = $1 AND thread_id = $2',
      [threadId, JSON.stringify(result)],
    );
  }

  async updateCostSnapshot(threadId: string, cost: ThreadCost): Promise<boolean> {
    try {
      await this.#change(
        'updateCostSnapshot',
        `UPDATE {t} SET turns = $3, input_tokens = $4, output_tokens = $5, spend = $6, updated_at = now()
         WHERE project = $1 AND thread_id = $2`,
        [threadId, cost.turns, cost.input_tokens, cost.output_tokens, toNumeric(cost.spend)],
      );
      return true;
    } catch (error) {
      // Best-effort, like the embedded store's busy registry: an unreachable database skips it.
      if ((error as { code?: unknown }).code === 'UNAVAILABLE') return false;
      throw error;
    }
  }

  async listActive(): Promise<ThreadRow[]> {
    return this.#rows('listActive', `AND status NOT IN (${TERMINAL_SQL})`, [], NEWEST_FIRST);
  }

  async list(filter: { status?: ThreadStatus; limit?: number } = {}): Promise<ThreadRow[]> {
    const limit = filter.limit ?? null;
    return filter.status === undefined
      ? this.#rows('list', '', [limit], `${NEWEST_FIRST} LIMIT $2`)
      : this.#rows('list', 'AND status = $2', [filter.status, limit], `${NEWEST_FIRST} LIMIT $3`);
  }

  async listChildren(parentId: string): Promise<ThreadRow[]> {
    return this.#rows('listChildren', 'AND parent_id = $2', [parentId], 'ORDER BY created_at, seq');
  }

  async setContinuation(threadId: string, nextThreadId: string): Promise<boolean> {
    const changed = await this.#change(
      'setContinuation',
      `UPDATE {t} SET continuation_thread_id = $3, status = 'continued', updated_at = now(), completed_at = now()
       WHERE project = $1 AND thread_id = $2 AND (continuation_thread_id IS NULL OR continuation_thread_id = $3)`,
      [threadId, nextThreadId],
    );
    return changed === 1;
  }

  async setChainInfo(threadId: string, chainRootId: string, previousThreadId: string): Promise<void> {
    await this.#change(
      'setChainInfo',
      `UPDATE {t} SET chain_root_id = $3, continuation_of = $4, updated_at = now()
       WHERE project = $1 AND thread_id = $2`,
      [threadId, chainRootId, previousThreadId],
    );
  }

  async getChain(threadId: string): Promise<ThreadRow[]> {
    const start = await this.getThread(threadId);
    if (!start) return [];
    // One visited set for both directions: a cycle (edited by hand or a bug) ends the walk.
    const seen = new Set([start.thread_id]);
    const before: ThreadRow[] = [];
    for (let row = start; row.continuation_of !== null && !seen.has(row.continuation_of); ) {
      const previous = await this.getThread(row.continuation_of);
      if (!previous) break;
      seen.add(previous.thread_id);
      before.unshift(previous);
      row = previous;
    }
    const after: ThreadRow[] = [];
    for (let row = start; row.continuation_thread_id !== null && !seen.has(row.continuation_thread_id); ) {
      const next = await this.getThread(row.continuation_thread_id);
      if (!next) break;
      seen.add(next.thread_id);
      after.push(next);
      row = next;
    }
    return [...before, start, ...after];
  }

  async tryIncrementSpawn(parentId: string, max: number): Promise<boolean> {
    // One statement: the row lock it takes makes the check and the increment one step.
    const changed = await this.#change(
      'tryIncrementSpawn',
      `UPDATE {t} SET spawn_count = spawn_count + 1, updated_at = now()
       WHERE project = $1 AND thread_id = $2 AND spawn_count < $3`,
      [parentId, max],
    );
    return changed === 1;
  }

  async releaseSpawn(parentId: string): Promise<void> {
    await this.#change(
      'releaseSpawn',
      `UPDATE {t} SET spawn_count = spawn_count - 1, updated_at = now()
       WHERE project = $1 AND thread_id = $2 AND spawn_count > 0`,
      [parentId],
    );
  }

  async unregister(threadId: string): Promise<boolean> {
    const changed = await this.#change(
      'unregister',
      `DELETE FROM {t} WHERE project = $1 AND thread_id = $2 AND status = 'created'`,
      [threadId],
    );
    return changed === 1;
  }
}
