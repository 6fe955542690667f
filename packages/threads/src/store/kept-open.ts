/**
 * An opener for long-lived hosts (the MCP server, an application, a remote server): one SQLite
 * store per project, kept open between runs instead of opened and closed for each. Opening costs
 * a schema check and a dozen prepared statements; closing the last connection of a WAL database
 * copies the log back into the file and syncs it. For a host that forks thread after thread that
 * was most of a warm fork's setup.
 *
 * Each open is a lease: the caller closes it as it would close its own store, and the connections
 * close once no lease has been held for `idleMs` (or when the process exits). A lease starts as an
 * open does: dead threads are marked stale. Files that are no longer the ones opened (the state
 * folder removed or replaced) are never written through a kept connection: the store is opened
 * again, with every check an open makes.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { threadsStateRoot } from '../persistence/paths.js';
import { BUDGET_LEDGER_DB, isProcessAlive, openThreadStore, REGISTRY_DB } from './index.js';
import type { ThreadStoreOpener } from './opener.js';
import type { ThreadStore } from './types.js';

export interface KeptOpenStores {
  open: ThreadStoreOpener;
  /** Closes every kept store now (leases still held keep working until they close). */
  closeIdle(): Promise<void>;
}

interface Kept {
  store: ThreadStore;
  identity: string;
  leases: number;
  timer?: NodeJS.Timeout;
}

const DEFAULT_IDLE_MS = 15_000;

export function keptOpenSqliteStores(options: { idleMs?: number } = {}): KeptOpenStores {
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const kept = new Map<string, Kept>();
  let exitHooked = false;

  const shut = (stateDir: string, entry: Kept): void => {
    clearTimeout(entry.timer);
    if (kept.get(stateDir) === entry) kept.delete(stateDir);
    void entry.store.close().catch(() => undefined);
  };

  const release = (stateDir: string, entry: Kept): void => {
    entry.leases -= 1;
    if (entry.leases > 0) return;
    if (kept.get(stateDir) !== entry) return void entry.store.close().catch(() => undefined);
    entry.timer = setTimeout(() => shut(stateDir, entry), idleMs);
    entry.timer.unref();
  };

  const acquire = async (stateDir: string): Promise<Kept> => {
    const entry = kept.get(stateDir);
    if (entry && entry.identity === filesIdentity(stateDir)) {
      clearTimeout(entry.timer);
      entry.leases += 1;
      // What an open does: threads whose process died since are marked now.
      await entry.store.markStale(isProcessAlive).catch(() => undefined);
      return entry;
    }
    if (entry) {
      kept.delete(stateDir);
      if (entry.leases === 0) shut(stateDir, entry);
    }
    const store = openThreadStore(stateDir);
    const fresh: Kept = { store, identity: filesIdentity(stateDir), leases: 1 };
    kept.set(stateDir, fresh);
    if (!exitHooked) {
      exitHooked = true;
      // Closing at exit checkpoints the log; an exit without it loses nothing (WAL recovers on open).
      process.once('exit', () => {
        for (const [dir, open] of kept) shut(dir, open);
      });
    }
    return fresh;
  };

  return {
    open: async (projectPath) => {
      const stateDir = threadsStateRoot(projectPath);
      const entry = await acquire(stateDir);
      return lease(entry.store, () => release(stateDir, entry));
    },
    async closeIdle() {
      for (const [dir, entry] of kept) if (entry.leases === 0) shut(dir, entry);
    },
  };
}

/** The store's methods, with a `close` that gives the lease back (once). */
function lease(store: ThreadStore, giveBack: () => void): ThreadStore {
  let held = true;
  return {
    stateDir: store.stateDir,
    registry: store.registry,
    ledger: store.ledger,
    markStale: (isAlive) => store.markStale(isAlive),
    waitForChange: (signal) => store.waitForChange(signal),
    async close() {
      if (!held) return;
      held = false;
      giveBack();
    },
  };
}

/** Device and inode of both database files: a different answer means they are not the files opened. */
function filesIdentity(stateDir: string): string {
  return [REGISTRY_DB, BUDGET_LEDGER_DB]
    .map((name) => {
      const stat = statSync(join(stateDir, name), { throwIfNoEntry: false });
      return stat ? `${stat.dev}:${stat.ino}` : 'absent';
    })
    .join('|');
}
