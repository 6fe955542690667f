/**
 * The thread store: registry (spec threads §2.1) and budget ledger (§2.2) behind one small
 * interface, so the runner never knows they are SQLite files and a server-grade store can be
 * added later. Every method is synchronous: better-sqlite3 is, and a server store would wrap
 * its own calls in the runner's process anyway.
 */

export type ThreadStatus = 'created' | 'running' | 'completed' | 'error' | 'cancelled' | 'continued';
export const TERMINAL_STATUSES: readonly ThreadStatus[] = ['completed', 'error', 'cancelled', 'continued'];

export interface ThreadCost {
  turns: number;
  input_tokens: number;
  output_tokens: number;
  spend: number;
  elapsed_seconds: number;
}

export interface ThreadRow {
  thread_id: string;
  directive: string;
  parent_id: string | null;
  status: ThreadStatus;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** Parsed from the `result` column. */
  result: Record<string, unknown> | null;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  spawn_count: number;
  spend: number;
  pid: number | null;
  model: string | null;
  continuation_of: string | null;
  continuation_thread_id: string | null;
  chain_root_id: string | null;
}

export interface ThreadRegistry {
  /** Inserts `created` with this process's pid. Throws if the id exists. */
  register(threadId: string, directive: string, parentId?: string | null): void;
  exists(threadId: string): boolean;
  updatePid(threadId: string, pid: number): void;
  /** Terminal statuses also set `completed_at`. */
  updateStatus(threadId: string, status: ThreadStatus): void;
  setModel(threadId: string, model: string): void;
  getThread(threadId: string): ThreadRow | undefined;
  setResult(threadId: string, result: Record<string, unknown>): void;
  /** Best-effort: false when the registry stayed locked past the busy timeout. */
  updateCostSnapshot(threadId: string, cost: ThreadCost): boolean;
  /** Non-terminal threads, newest first. */
  listActive(): ThreadRow[];
  list(filter?: { status?: ThreadStatus; limit?: number }): ThreadRow[];
  listChildren(parentId: string): ThreadRow[];
  /**
   * Links `threadId` to the thread that continues it; false (nothing changed) when another
   * thread already does: a chain never forks, whichever of two concurrent resumes comes second.
   */
  setContinuation(threadId: string, nextThreadId: string): boolean;
  setChainInfo(threadId: string, chainRootId: string, previousThreadId: string): void;
  /** Root → terminal, cycle-safe. */
  getChain(threadId: string): ThreadRow[];
  /** Atomic: false when the parent already has `max` children (or does not exist). */
  tryIncrementSpawn(parentId: string, max: number): boolean;
  /** Gives back a slot `tryIncrementSpawn` took for a child that was then refused. */
  releaseSpawn(parentId: string): void;
  /** Deletes a row still `created` (a fork refused before it ran); false when there was none. */
  unregister(threadId: string): boolean;
  /** Running threads whose pid is gone become `error` (issue 15 calls it on open). */
  markStale(isAlive: (pid: number) => boolean): string[];
}

export type BudgetStatus = 'active' | 'completed' | 'error' | 'cancelled';

export interface BudgetRow {
  thread_id: string;
  parent_thread_id: string | null;
  reserved_spend: number;
  actual_spend: number;
  max_spend: number | null;
  status: BudgetStatus;
  created_at: string;
  updated_at: string;
}

export interface BudgetLedger {
  /** Roots: `{max_spend: max, reserved_spend: max, active}`; a no-op when the row exists. */
  register(threadId: string, maxSpend: number): void;
  /** Atomic (`BEGIN IMMEDIATE`); idempotent for an existing active row with the same parent. */
  reserve(threadId: string, amount: number, parentId: string, childMax?: number): void;
  incrementActual(threadId: string, delta: number): void;
  /** `actual = own + Σ children.actual`. */
  reportActual(threadId: string, ownSpend: number): void;
  /**
   * Adds the child's subtree spend to an active parent; without `amount`, the child's recorded
   * `actual_spend` (its subtree's, after `reportActual`).
   */
  cascadeSpend(childId: string, parentId: string, amount?: number): void;
  /** `reserved = actual`, status set: the unused reservation returns to the parent. */
  release(threadId: string, status: Exclude<BudgetStatus, 'active'>): void;
  /**
   * A thread's end in one transaction: `reportActual`, `cascadeSpend` to its budget parent (the
   * parent of record, or the ancestor that adopted it), then `release`. Done as three steps, a
   * reader between them sees the spend twice (in the parent and in the open reservation).
   */
  settle(threadId: string, ownSpend: number, status: Exclude<BudgetStatus, 'active'>): void;
  getRemaining(threadId: string): number;
  canSpawn(parentId: string, amount: number): { affordable: boolean; remaining: number; requested: number };
  getTreeSpend(threadId: string): {
    total_actual: number;
    total_reserved: number;
    thread_count: number;
    active_count: number;
  };
  get(threadId: string): BudgetRow | undefined;
}

/** Registry + ledger for one project; `close()` releases file handles. */
export interface ThreadStore {
  /** `<project>/.ai/state/threads/`. */
  readonly stateDir: string;
  readonly registry: ThreadRegistry;
  readonly ledger: BudgetLedger;
  close(): void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether a registry row is an async tool run: registered as `tool/<id>` under a UUID (a directive
 * thread's id names its directive). A tool run keeps no thread.json or transcript: its registry
 * row, with the result stored when it ends, is all there is of it.
 */
export function isToolRunRow(row: { thread_id: string; directive: string }): boolean {
  return row.directive.startsWith('tool/') && UUID.test(row.thread_id);
}
