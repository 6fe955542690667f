/**
 * `registry.db` (spec threads §2.1): one row per thread — status, parent, cost snapshot, spawn
 * count, continuation links. Every process of a project shares it, so every counter is changed by
 * one atomic statement, never read-modify-written in JavaScript.
 */
import { ThreadAlreadyRegistered, ThreadRegistryLocked } from './errors.js';
import {
  type Database,
  isBusy,
  isUniqueViolation,
  nowIso,
  openDatabase,
  type Statement,
  type Sync,
} from './sqlite.js';
import {
  TERMINAL_STATUSES,
  type ThreadCost,
  type ThreadRegistry,
  type ThreadRow,
  type ThreadStatus,
} from './types.js';

/** The original table: columns up to `result`. Later columns arrive by the migration below. */
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS threads (
  thread_id    TEXT PRIMARY KEY,
  directive    TEXT NOT NULL,
  parent_id    TEXT,
  status       TEXT DEFAULT 'created',
  created_at   TEXT,
  updated_at   TEXT,
  completed_at TEXT,
  result       TEXT
)`;

/** Columns after `result`, in spec order; added with ALTER TABLE when an older file lacks them. */
export const REGISTRY_ADDED_COLUMNS: readonly (readonly [name: string, definition: string])[] = [
  ['turns', 'INTEGER DEFAULT 0'],
  ['input_tokens', 'INTEGER DEFAULT 0'],
  ['output_tokens', 'INTEGER DEFAULT 0'],
  ['spawn_count', 'INTEGER DEFAULT 0'],
  ['spend', 'REAL DEFAULT 0.0'],
  ['pid', 'INTEGER'],
  ['model', 'TEXT'],
  ['continuation_of', 'TEXT'],
  ['continuation_thread_id', 'TEXT'],
  ['chain_root_id', 'TEXT'],
];

function initRegistry(db: Database): void {
  db.exec(CREATE_TABLE);
  const present = new Set((db.pragma('table_info(threads)') as { name: string }[]).map((c) => c.name));
  for (const [name, definition] of REGISTRY_ADDED_COLUMNS) {
    if (!present.has(name)) db.exec(`ALTER TABLE threads ADD COLUMN ${name} ${definition}`);
  }
  db.exec('CREATE INDEX IF NOT EXISTS idx_threads_parent ON threads(parent_id)');
  db.exec('CREATE INDEX IF NOT EXISTS idx_threads_status ON threads(status)');
}

const TERMINAL_SQL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');
/** Newest first; rowid breaks ties between rows created in the same millisecond. */
const NEWEST_FIRST = 'ORDER BY created_at DESC, rowid DESC';

type RawRow = Omit<ThreadRow, 'result'> & { result: string | null };

function toRow(raw: RawRow): ThreadRow {
  return { ...raw, result: parseResult(raw.result) };
}

/** A result the store did not write (hand-edited, truncated) is kept as text, not thrown on. */
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

export class SqliteThreadRegistry implements Sync<ThreadRegistry> {
  readonly db: Database;
  readonly #sql: Record<
    | 'insert'
    | 'exists'
    | 'get'
    | 'pid'
    | 'claimPid'
    | 'status'
    | 'statusTerminal'
    | 'model'
    | 'result'
    | 'cost'
    | 'active'
    | 'all'
    | 'byStatus'
    | 'children'
    | 'continuation'
    | 'chainInfo'
    | 'spawn'
    | 'unspawn'
    | 'unregister'
    | 'liveCandidates'
    | 'markStale',
    Statement
  >;

  constructor(path: string, busyTimeoutMs?: number) {
    this.db = openDatabase(path, initRegistry, busyTimeoutMs);
    const p = (sql: string) => this.db.prepare(sql);
    this.#sql = {
      insert: p(`INSERT INTO threads (thread_id, directive, parent_id, status, created_at, updated_at, pid)
                 VALUES (?, ?, ?, 'created', ?, ?, ?)`),
      exists: p('SELECT 1 FROM threads WHERE thread_id = ?').pluck(),
      get: p('SELECT * FROM threads WHERE thread_id = ?'),
      pid: p('UPDATE threads SET pid = ?, updated_at = ? WHERE thread_id = ?'),
      claimPid: p(
        `UPDATE threads SET pid = ?, updated_at = ? WHERE thread_id = ? AND status = 'running' AND pid IS ?`,
      ),
      status: p('UPDATE threads SET status = ?, updated_at = ? WHERE thread_id = ?'),
      statusTerminal: p(
        'UPDATE threads SET status = ?, updated_at = ?, completed_at = ? WHERE thread_id = ?',
      ),
      model: p('UPDATE threads SET model = ?, updated_at = ? WHERE thread_id = ?'),
      result: p('UPDATE threads SET result = ?, updated_at = ? WHERE thread_id = ?'),
      cost: p(`UPDATE threads SET turns = ?, input_tokens = ?, output_tokens = ?, spend = ?, updated_at = ?
               WHERE thread_id = ?`),
      active: p(`SELECT * FROM threads WHERE status NOT IN (${TERMINAL_SQL}) ${NEWEST_FIRST}`),
      all: p(`SELECT * FROM threads ${NEWEST_FIRST} LIMIT ?`),
      byStatus: p(`SELECT * FROM threads WHERE status = ? ${NEWEST_FIRST} LIMIT ?`),
      children: p('SELECT * FROM threads WHERE parent_id = ? ORDER BY created_at, rowid'),
      continuation: p(`UPDATE threads SET continuation_thread_id = ?, status = 'continued', updated_at = ?,
                       completed_at = ? WHERE thread_id = ?
                       AND (continuation_thread_id IS NULL OR continuation_thread_id = ?)`),
      chainInfo: p(
        'UPDATE threads SET chain_root_id = ?, continuation_of = ?, updated_at = ? WHERE thread_id = ?',
      ),
      spawn: p(`UPDATE threads SET spawn_count = spawn_count + 1, updated_at = ?
                WHERE thread_id = ? AND spawn_count < ?`),
      unspawn: p(`UPDATE threads SET spawn_count = spawn_count - 1, updated_at = ?
                  WHERE thread_id = ? AND spawn_count > 0`),
      // Only a row that never started: a thread that ran keeps its history.
      unregister: p(`DELETE FROM threads WHERE thread_id = ? AND status = 'created'`),
      liveCandidates: p(
        `SELECT thread_id, pid FROM threads WHERE status IN ('created', 'running') AND pid IS NOT NULL`,
      ),
      // Re-checks status and pid, so a thread that finished or moved meanwhile is left alone.
      markStale: p(`UPDATE threads SET status = 'error', updated_at = ?, completed_at = ?, result = ?
                    WHERE thread_id = ? AND status IN ('created', 'running') AND pid = ?`),
    };
  }

  register(threadId: string, directive: string, parentId: string | null = null): void {
    const now = nowIso();
    try {
      this.#sql.insert.run(threadId, directive, parentId, now, now, process.pid);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ThreadAlreadyRegistered(threadId, error);
      throw this.#translate('register', error);
    }
  }

  exists(threadId: string): boolean {
    return this.#sql.exists.get(threadId) !== undefined;
  }

  updatePid(threadId: string, pid: number): void {
    this.#write('updatePid', () => this.#sql.pid.run(pid, nowIso(), threadId));
  }

  claimPid(threadId: string, expected: number | null, pid: number): boolean {
    return (
      this.#write('claimPid', () => this.#sql.claimPid.run(pid, nowIso(), threadId, expected)).changes === 1
    );
  }

  updateStatus(threadId: string, status: ThreadStatus): void {
    const now = nowIso();
    this.#write('updateStatus', () =>
      TERMINAL_STATUSES.includes(status)
        ? this.#sql.statusTerminal.run(status, now, now, threadId)
        : this.#sql.status.run(status, now, threadId),
    );
  }

  setModel(threadId: string, model: string): void {
    this.#write('setModel', () => this.#sql.model.run(model, nowIso(), threadId));
  }

  getThread(threadId: string): ThreadRow | undefined {
    const raw = this.#sql.get.get(threadId) as RawRow | undefined;
    return raw && toRow(raw);
  }

  setResult(threadId: string, result: Record<string, unknown>): void {
    this.#write('setResult', () => this.#sql.result.run(JSON.stringify(result), nowIso(), threadId));
  }

  /** Best-effort (spec §2.1): a registry locked past the busy timeout skips this snapshot. */
  updateCostSnapshot(threadId: string, cost: ThreadCost): boolean {
    try {
      this.#sql.cost.run(cost.turns, cost.input_tokens, cost.output_tokens, cost.spend, nowIso(), threadId);
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    }
  }

  listActive(): ThreadRow[] {
    return (this.#sql.active.all() as RawRow[]).map(toRow);
  }

  list(filter: { status?: ThreadStatus; limit?: number } = {}): ThreadRow[] {
    // SQLite reads LIMIT -1 as "no limit".
    const limit = filter.limit ?? -1;
    const rows =
      filter.status === undefined ? this.#sql.all.all(limit) : this.#sql.byStatus.all(filter.status, limit);
    return (rows as RawRow[]).map(toRow);
  }

  listChildren(parentId: string): ThreadRow[] {
    return (this.#sql.children.all(parentId) as RawRow[]).map(toRow);
  }

  setContinuation(threadId: string, nextThreadId: string): boolean {
    const now = nowIso();
    return this.#write(
      'setContinuation',
      () => this.#sql.continuation.run(nextThreadId, now, now, threadId, nextThreadId).changes === 1,
    );
  }

  setChainInfo(threadId: string, chainRootId: string, previousThreadId: string): void {
    this.#write('setChainInfo', () =>
      this.#sql.chainInfo.run(chainRootId, previousThreadId, nowIso(), threadId),
    );
  }

  getChain(threadId: string): ThreadRow[] {
    const start = this.getThread(threadId);
    if (!start) return [];
    // One visited set for both directions: a cycle (hand-edited or buggy links) ends the walk.
    const seen = new Set([start.thread_id]);
    const before: ThreadRow[] = [];
    for (let row = start; row.continuation_of !== null && !seen.has(row.continuation_of); ) {
      const previous = this.getThread(row.continuation_of);
      if (!previous) break;
      seen.add(previous.thread_id);
      before.unshift(previous);
      row = previous;
    }
    const after: ThreadRow[] = [];
    for (let row = start; row.continuation_thread_id !== null && !seen.has(row.continuation_thread_id); ) {
      const next = this.getThread(row.continuation_thread_id);
      if (!next) break;
      seen.add(next.thread_id);
      after.push(next);
      row = next;
    }
    return [...before, start, ...after];
  }

  tryIncrementSpawn(parentId: string, max: number): boolean {
    // One statement: the limit check and the increment happen under the same write lock, so
    // racing processes cannot both take the last slot (the reference counted per process).
    return this.#write('tryIncrementSpawn', () => this.#sql.spawn.run(nowIso(), parentId, max)).changes === 1;
  }

  releaseSpawn(parentId: string): void {
    this.#write('releaseSpawn', () => this.#sql.unspawn.run(nowIso(), parentId));
  }

  unregister(threadId: string): boolean {
    return this.#write('unregister', () => this.#sql.unregister.run(threadId)).changes === 1;
  }

  /** Running threads whose pid is gone become `error` (issue 15 calls it on open). */
  markStale(isAlive: (pid: number) => boolean): string[] {
    const candidates = this.#sql.liveCandidates.all() as { thread_id: string; pid: number }[];
    const marked: string[] = [];
    for (const { thread_id, pid } of candidates) {
      if (isAlive(pid)) continue;
      const now = nowIso();
      const result = JSON.stringify({
        error: `Thread process ${pid} is no longer running; the thread was marked as failed when the registry was next opened.`,
        stale: true,
        pid,
      });
      const { changes } = this.#write('markStale', () =>
        this.#sql.markStale.run(now, now, result, thread_id, pid),
      );
      if (changes === 1) marked.push(thread_id);
    }
    return marked;
  }

  close(): void {
    this.db.close();
  }

  #write<T>(operation: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw this.#translate(operation, error);
    }
  }

  #translate(operation: string, error: unknown): unknown {
    return isBusy(error) ? new ThreadRegistryLocked(operation, error) : error;
  }
}

/**
 * Whether a process is alive, for `markStale`: signal 0 checks existence without sending
 * anything; EPERM means it exists but belongs to another user.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
