/**
 * Who opens a project's thread store: the host's opener, or the embedded SQLite store. Every place
 * that opens a store during a thread's life goes through here, so a server store (Postgres, a
 * queue's) is plugged in by handing its opener to the host, never by changing a caller.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { threadsStateRoot } from '../persistence/paths.js';
import { openThreadStore, REGISTRY_DB } from './index.js';
import type { ThreadStore } from './types.js';

/**
 * Opens the thread store of the project at `projectPath`. Each call answers a store of its own,
 * which its caller closes once, when it is done: one store per thread run, per query.
 */
export type ThreadStoreOpener = (projectPath: string) => ThreadStore | Promise<ThreadStore>;

/** The default: `<project>/.ai/state/threads/{registry,budget_ledger}.db`. */
export const openSqliteThreadStore: ThreadStoreOpener = (projectPath) =>
  openThreadStore(threadsStateRoot(projectPath));

/** Opens the project's store with `opener` (default SQLite); a throwing opener rejects. */
export async function openProjectStore(
  projectPath: string,
  opener: ThreadStoreOpener = openSqliteThreadStore,
): Promise<ThreadStore> {
  return await opener(projectPath);
}

/**
 * The store a detached run opens to take its thread up: the embedded store is opened without
 * marking dead threads failed, because the thread this run takes over may be one (its earlier
 * process was killed); `claimRun` then decides whether it may. A host's own opener is its own.
 */
export async function openStoreForRun(projectPath: string, opener?: ThreadStoreOpener): Promise<ThreadStore> {
  if (opener) return await opener(projectPath);
  return openThreadStore(threadsStateRoot(projectPath), { markStale: false });
}

/**
 * The store a read-only query uses, or undefined when the default SQLite store has no registry yet
 * (no thread ever ran there): a query never creates `.ai/state/threads`. A host's own store is
 * always opened: whether it holds anything is its own business.
 */
export async function openStoreForQuery(
  projectPath: string,
  opener?: ThreadStoreOpener,
): Promise<ThreadStore | undefined> {
  if (opener) return await opener(projectPath);
  const root = threadsStateRoot(projectPath);
  return existsSync(join(root, REGISTRY_DB)) ? openThreadStore(root) : undefined;
}

/** What a function called without a host accepts to use a store other than SQLite. */
export interface StoreChoice {
  /** Opens the project's thread store; default SQLite under `.ai/state/threads`. */
  store?: ThreadStoreOpener;
}
