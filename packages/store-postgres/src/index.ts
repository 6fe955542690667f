/**
 * @ryeos/store-postgres: the thread store of @ryeos/threads on PostgreSQL, for workers on many
 * machines sharing one registry and budget ledger. Importing it loads no database client.
 */
export type { BudgetWarning } from './ledger.js';
export { openWorkerPresence, type WorkerPresence, type WorkerPresenceOptions } from './presence.js';
export { MIGRATIONS } from './schema.js';
export {
  openPostgresThreadStore,
  type PostgresStoreOpenerOptions,
  type PostgresStoreOptions,
  postgresStoreOpener,
} from './store.js';
