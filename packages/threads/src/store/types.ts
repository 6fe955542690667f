/**
 * The thread store: registry (spec threads §2.1) and budget ledger (§2.2) behind one small
 * interface, so the runner never knows they are SQLite files. Every method returns a promise and
 * every multi-step change is one named operation (`reserve`, `settle`, `tryIncrementSpawn`,
 * `markStale` …), so a server store (Postgres, a queue's worker) is a new implementation of this
 * file's interfaces, never a change to its callers. The embedded SQLite store (sqlite-store.ts)
 * wraps synchronous calls: its promises are already settled when they are returned.
 */

export type ThreadStatus = 'created' | 'running' | 'completed' | 'error' | 'cancelled' | 'continued';
/** What a thread has spent before its first turn. */
export const ZERO_COST: Readonly<ThreadCost> = Object.freeze({
  turns: 0,
  input_tokens: 0,
  output_tokens: 0,
  spend: 0,
  elapsed_seconds: 0,
});

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

/**
 * A store that stays locked or unreachable past its timeout rejects with a RyeError UNAVAILABLE
 * (`ThreadRegistryLocked`, `BudgetLedgerLocked`), reads included: callers may retry on that code.
 */
export interface ThreadRegistry {
  /** Inserts `created` with this process's pid. Throws if the id exists. */
  register(threadId: string, directive: string, parentId?: string | null): Promise<void>;
  exists(threadId: string): Promise<boolean>;
  updatePid(threadId: string, pid: number): Promise<void>;
  /**
   * Takes a running thread over from the process recorded on it: sets `pid` only while the row
   * is `running` and still names `expected` (null: none). Of two claimants, one wins.
   */
  claimPid(threadId: string, expected: number | null, pid: number): Promise<boolean>;
  /**
   * A server store with a run queue: the running thread waits in the queue, run by no process yet
   * (pid and worker cleared), so no liveness check fails it before a worker takes it up.
   */
  markQueued?(threadId: string): Promise<void>;
  /**
   * A queued run takes the thread (still `running`) for this process and worker, with a new
   * fencing token; another run that held it loses it. Undefined when the row is not running.
   */
  takeRun?(threadId: string, pid: number): Promise<number | undefined>;
  /** Whether the run with fencing token `epoch` still holds the thread (no later run took it). */
  holdsRun?(threadId: string, epoch: number): Promise<boolean>;
  /** Terminal statuses also set `completed_at`. */
  updateStatus(threadId: string, status: ThreadStatus): Promise<void>;
  setModel(threadId: string, model: string): Promise<void>;
  getThread(threadId: string): Promise<ThreadRow | undefined>;
  setResult(threadId: string, result: Record<string, unknown>): Promise<void>;
  /** Best-effort: false when the registry stayed locked past the busy timeout. */
  updateCostSnapshot(threadId: string, cost: ThreadCost): Promise<boolean>;
  /** Non-terminal threads, newest first. */
  listActive(): Promise<ThreadRow[]>;
  list(filter?: { status?: ThreadStatus; limit?: number }): Promise<ThreadRow[]>;
  listChildren(parentId: string): Promise<ThreadRow[]>;
  /**
   * Links `threadId` to the thread that continues it; false (nothing changed) when another
   * thread already does: a chain never forks, whichever of two concurrent resumes comes second.
   */
  setContinuation(threadId: string, nextThreadId: string): Promise<boolean>;
  setChainInfo(threadId: string, chainRootId: string, previousThreadId: string): Promise<void>;
  /** Root → terminal, cycle-safe. */
  getChain(threadId: string): Promise<ThreadRow[]>;
  /** Atomic: false when the parent already has `max` children (or does not exist). */
  tryIncrementSpawn(parentId: string, max: number): Promise<boolean>;
  /** Gives back a slot `tryIncrementSpawn` took for a child that was then refused. */
  releaseSpawn(parentId: string): Promise<void>;
  /** Deletes a row still `created` (a fork refused before it ran); false when there was none. */
  unregister(threadId: string): Promise<boolean>;
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

export interface TreeSpend {
  total_actual: number;
  total_reserved: number;
  thread_count: number;
  active_count: number;
}

export interface BudgetLedger {
  /** Roots: `{max_spend: max, reserved_spend: max, active}`; a no-op when the row exists. */
  register(threadId: string, maxSpend: number): Promise<void>;
  /**
   * Atomic: the check against the parent's remaining budget and the new row are one step, whatever
   * other processes reserve meanwhile. Rejects with `InsufficientBudget` (LIMIT,
   * `details.reason: 'insufficient_budget'`) or `BudgetNotRegistered`; idempotent for an existing
   * active row with the same parent.
   */
  reserve(threadId: string, amount: number, parentId: string, childMax?: number): Promise<void>;
  incrementActual(threadId: string, delta: number): Promise<void>;
  /** `actual = own + Σ children.actual`. */
  reportActual(threadId: string, ownSpend: number): Promise<void>;
  /**
   * Adds the child's subtree spend to an active parent; without `amount`, the child's recorded
   * `actual_spend` (its subtree's, after `reportActual`).
   */
  cascadeSpend(childId: string, parentId: string, amount?: number): Promise<void>;
  /** `reserved = actual`, status set: the unused reservation returns to the parent. */
  release(threadId: string, status: Exclude<BudgetStatus, 'active'>): Promise<void>;
  /**
   * A thread's end in one transaction: `reportActual`, `cascadeSpend` to its budget parent (the
   * parent of record, or the ancestor that adopted it), then `release`. Done as three steps, a
   * reader between them sees the spend twice (in the parent and in the open reservation).
   */
  settle(threadId: string, ownSpend: number, status: Exclude<BudgetStatus, 'active'>): Promise<void>;
  /**
   * The end of a thread that did not finalize (it failed mid-run, was abandoned, or its process
   * died), in one transaction: what its active row recorded spent (`actual_spend`) is charged to
   * its budget parent, then `release`. A no-op for a row that already ended.
   */
  end(threadId: string, status: Exclude<BudgetStatus, 'active'>): Promise<void>;
  getRemaining(threadId: string): Promise<number>;
  canSpawn(
    parentId: string,
    amount: number,
  ): Promise<{ affordable: boolean; remaining: number; requested: number }>;
  getTreeSpend(threadId: string): Promise<TreeSpend>;
  get(threadId: string): Promise<BudgetRow | undefined>;
}

/**
 * Registry + ledger for one project, and the two things that span processes: noticing that a
 * thread's process is gone, and being woken when another process changes the registry.
 */
/** The signed files of a thread a process on another machine needs to take it up. */
export type SharedRecordName = 'thread.json' | 'transcript.jsonl';

/**
 * Copies of threads' signed files in a store every worker reads (a server database), so a
 * thread is taken up on a machine that never had its folder. The copies are untrusted storage:
 * whoever restores one verifies its signatures, as it would the local file.
 */
export interface SharedThreadRecords {
  put(threadId: string, name: SharedRecordName, content: Buffer): Promise<void>;
  get(threadId: string, name: SharedRecordName): Promise<Buffer | undefined>;
}

export interface ThreadStore {
  /** `<project>/.ai/state/threads/`: where each thread's folder (transcript, thread.json) lives. */
  readonly stateDir: string;
  readonly registry: ThreadRegistry;
  readonly ledger: BudgetLedger;
  /** Where a shared store keeps copies of threads' signed files (absent: the folder is all there is). */
  readonly records?: SharedThreadRecords;
  /**
   * Threads still `created`/`running` whose process is gone (`isAlive(pid)` false) become `error`
   * and their active reservation is released; answers their ids. A store that tracks liveness
   * another way (heartbeats) may ignore `isAlive`.
   */
  markStale(isAlive: (pid: number) => boolean): Promise<string[]>;
  /**
   * Resolves at the next change to the registry made by any process after this call (it may
   * also resolve early: callers re-read and wait again); rejects with the signal's reason when
   * aborted. Callers keep a slow poll besides it, for file systems whose notifications are lost.
   */
  waitForChange(signal: AbortSignal): Promise<void>;
  /** Releases the store's connections; a second call does nothing. */
  close(): Promise<void>;
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
