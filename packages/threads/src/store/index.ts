/**
 * The SQLite thread store: `<project>/.ai/state/threads/{registry,budget_ledger}.db`.
 * Importing this module loads no native code; `openThreadStore` loads better-sqlite3.
 */
import { join } from 'node:path';
import { ensureThreadsStateRoot } from '../persistence/paths.js';
import { type BudgetWarning, SqliteBudgetLedger } from './sqlite-ledger.js';
import { isProcessAlive, SqliteThreadRegistry } from './sqlite-registry.js';
import { markStaleSync, sqliteThreadStore } from './sqlite-store.js';
import type { ThreadStore } from './types.js';

export {
  BudgetLedgerLocked,
  BudgetNotRegistered,
  InsufficientBudget,
  ThreadAlreadyRegistered,
  ThreadRegistryLocked,
} from './errors.js';
export { BUSY_TIMEOUT_MS, loadDriver as loadStoreDriver } from './sqlite.js';
export { type BudgetWarning, USD_EPSILON } from './sqlite-ledger.js';
export { isProcessAlive } from './sqlite-registry.js';
export * from './types.js';

export const REGISTRY_DB = 'registry.db';
export const BUDGET_LEDGER_DB = 'budget_ledger.db';

export interface ThreadStoreOptions {
  /** Called when a thread's actual spend passes its reservation (logged, never blocking). */
  onBudgetWarning?: BudgetWarning;
  /** How long a write waits for another process's lock before failing (default 5000 ms, spec §2). */
  busyTimeoutMs?: number;
  /**
   * Running threads whose process is gone are marked `error`, their reservation released
   * (issue 15: "on the next registry open"). Default true.
   */
  markStale?: boolean;
}

/**
 * Opens (creating, mode 0700) `stateDir` and its two databases, behind the async `ThreadStore`
 * (opening stays synchronous: it is local files, and callers in exit paths need it). One connection per file for the
 * store's lifetime; several stores, in one process or many, may share the files.
 *
 * `stateDir` is made one level at a time and refused (INTEGRITY) when a folder from the project's
 * `.ai` down to it is a symlink, or `.ai` resolves outside the project; a database (or its
 * `-wal`/`-shm`) that is a symlink is refused too: a repository cannot send them elsewhere.
 */
export function openThreadStore(stateDir: string, options: ThreadStoreOptions = {}): ThreadStore {
  ensureThreadsStateRoot(stateDir);
  const registry = new SqliteThreadRegistry(join(stateDir, REGISTRY_DB), options.busyTimeoutMs);
  let ledger: SqliteBudgetLedger;
  try {
    ledger = new SqliteBudgetLedger(
      join(stateDir, BUDGET_LEDGER_DB),
      options.onBudgetWarning,
      options.busyTimeoutMs,
    );
  } catch (error) {
    registry.close();
    throw error;
  }
  if (options.markStale !== false) {
    try {
      markStaleSync(registry, ledger, isProcessAlive);
    } catch {
      // Another process holds the lock: it can mark them as well as we can.
    }
  }
  return sqliteThreadStore({ stateDir, registryFile: REGISTRY_DB, registry, ledger });
}
