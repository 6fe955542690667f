/**
 * The embedded thread store: the synchronous SQLite registry and ledger behind the async
 * `ThreadStore` interface. Each method calls the synchronous one and answers a settled promise,
 * so the SQLite path does the same work in the same order as before (no thread pool, no extra
 * statements); a throw becomes a rejection, never an exception out of a promise-returning call.
 */
import { type FSWatcher, watch } from 'node:fs';
import { BudgetLedgerLocked, ThreadRegistryLocked } from './errors.js';
import { isBusy, type Sync } from './sqlite.js';
import type { SqliteDatabase } from './sqlite-driver.js';
import type { SqliteBudgetLedger } from './sqlite-ledger.js';
import type { SqliteThreadRegistry } from './sqlite-registry.js';
import type { BudgetLedger, ThreadRegistry, ThreadStore } from './types.js';

type MethodsOf<T> = readonly {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never;
}[keyof T][];

const REGISTRY_METHODS = [
  'register',
  'exists',
  'updatePid',
  'claimPid',
  'updateStatus',
  'setModel',
  'getThread',
  'setResult',
  'updateCostSnapshot',
  'listActive',
  'list',
  'listChildren',
  'setContinuation',
  'setChainInfo',
  'getChain',
  'tryIncrementSpawn',
  'releaseSpawn',
  'unregister',
] as const satisfies MethodsOf<ThreadRegistry>;

const LEDGER_METHODS = [
  'register',
  'reserve',
  'incrementActual',
  'reportActual',
  'cascadeSpend',
  'release',
  'settle',
  'end',
  'getRemaining',
  'canSpawn',
  'getTreeSpend',
  'get',
] as const satisfies MethodsOf<BudgetLedger>;

/**
 * Exposes only the interface's methods (never the connection), each answering a promise. A read
 * that found the database locked rejects like a write does (`locked`: a RyeError UNAVAILABLE), so
 * callers retry on the code, never on a driver's error.
 */
function promising<T extends object>(
  sync: Sync<T>,
  methods: readonly (keyof T & string)[],
  locked: (operation: string, cause: unknown) => Error,
): T {
  const wrapped: Record<string, unknown> = {};
  for (const name of methods) {
    const method = (sync as Record<string, (...args: unknown[]) => unknown>)[name]!;
    wrapped[name] = (...args: unknown[]) => {
      try {
        return Promise.resolve(method.apply(sync, args));
      } catch (error) {
        return Promise.reject(isBusy(error) ? locked(name, error) : error);
      }
    };
  }
  return Object.freeze(wrapped) as T;
}

export interface SqliteStoreParts {
  stateDir: string;
  registryFile: string;
  registry: SqliteThreadRegistry;
  ledger: SqliteBudgetLedger;
}

/** The connections behind each SQLite store, for tests that look at the files' own state. */
const connections = new WeakMap<ThreadStore, { registry: SqliteDatabase; ledger: SqliteDatabase }>();

/** The SQLite connections of a store `openThreadStore` made; undefined for any other store. */
export function sqliteDatabases(
  store: ThreadStore,
): { registry: SqliteDatabase; ledger: SqliteDatabase } | undefined {
  return connections.get(store);
}

export function sqliteThreadStore(parts: SqliteStoreParts): ThreadStore {
  const { stateDir, registryFile, registry, ledger } = parts;
  let open = true;
  const store: ThreadStore = {
    stateDir,
    registry: promising<ThreadRegistry>(
      registry,
      REGISTRY_METHODS,
      (operation, cause) => new ThreadRegistryLocked(operation, cause),
    ),
    ledger: promising<BudgetLedger>(
      ledger,
      LEDGER_METHODS,
      (operation, cause) => new BudgetLedgerLocked(operation, cause),
    ),
    async markStale(isAlive) {
      return markStaleSync(registry, ledger, isAlive);
    },
    waitForChange: (signal) => registryChange(stateDir, registryFile, signal),
    async close() {
      if (!open) return;
      open = false;
      registry.close();
      ledger.close();
    },
  };
  connections.set(store, { registry: registry.db, ledger: ledger.db });
  return store;
}

/** Marks the dead threads `error`, then ends each one's still-active reservation (its recorded spend charged). */
export function markStaleSync(
  registry: SqliteThreadRegistry,
  ledger: SqliteBudgetLedger,
  isAlive: (pid: number) => boolean,
): string[] {
  const marked = registry.markStale(isAlive);
  for (const id of marked) {
    ledger.end(id, 'error');
  }
  return marked;
}

/**
 * Another process's commit writes `registry.db-wal` (or `registry.db`) in the state folder: a
 * watch on the folder sees it. Where the watch cannot start (inotify limit, a mount without
 * events) the promise stays pending until aborted, and the caller's poll carries on alone.
 */
function registryChange(stateDir: string, registryFile: string, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    let watcher: FSWatcher | undefined;
    const done = () => {
      signal.removeEventListener('abort', onAbort);
      try {
        watcher?.close();
      } catch {
        // already closed
      }
    };
    const onAbort = () => {
      done();
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      // Not persistent: the caller's timers keep the process alive while it waits, nothing else.
      watcher = watch(stateDir, { persistent: false }, (_event, filename) => {
        // Only the registry's files matter (thread folders and the ledger change too).
        if (filename !== null && !String(filename).startsWith(registryFile)) return;
        done();
        resolve();
      });
      watcher.on('error', () => {
        try {
          watcher?.close();
        } catch {
          // already closed
        }
      });
    } catch {
      // No watch: pending until aborted.
    }
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The wait was aborted', 'AbortError');
}
