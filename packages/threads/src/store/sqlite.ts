/**
 * Opening the store's SQLite files. better-sqlite3 is a native addon, so it is loaded on the first
 * open and never by importing this module: a process that never touches threads (search, sign,
 * most CLI calls) pays nothing for it.
 *
 * One long-lived connection per file and process is right for better-sqlite3 (the reference's
 * per-operation connections are a Python habit). It stays correct across processes because WAL
 * gives every autocommit statement a fresh snapshot, every write statement takes the write lock
 * before it reads, and every multi-statement read-then-write runs in `BEGIN IMMEDIATE`.
 */
import { chmodSync, existsSync, lstatSync } from 'node:fs';
import { RyeError } from '@ryeos/lillux';
import { loadDriver, type SqliteDatabase, type SqliteStatement } from './sqlite-driver.js';
import { initVerifiedSchema, refuseForeignObjects } from './sqlite-schema-check.js';

export { loadDriver } from './sqlite-driver.js';
export type Database = SqliteDatabase;
export type Statement = SqliteStatement;

/** The synchronous twin of an async store interface: what the SQLite classes implement. */
export type Sync<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K];
};

/** Spec threads §2: a writer waits up to 5 s for another process's lock before giving up. */
export const BUSY_TIMEOUT_MS = 5000;

/** The files SQLite opens for a database at `path`: the database and its companions. */
export const DATABASE_COMPANIONS = ['', '-wal', '-shm', '-journal'] as const;

/**
 * Refuses a database file, or one of its `-wal`, `-shm`, `-journal` companions, that is a
 * symlink, not a regular file, or hard-linked elsewhere: SQLite would read and write through it,
 * wherever it points (a repository can ship `.ai/state/threads/registry.db` as a link).
 */
export function refuseLinkedDatabase(path: string): void {
  for (const suffix of DATABASE_COMPANIONS) {
    const file = path + suffix;
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    const why = stat.isSymbolicLink()
      ? 'it is a symbolic link'
      : !stat.isFile()
        ? 'it is not a regular file'
        : stat.nlink > 1
          ? `it has ${stat.nlink} hard links`
          : undefined;
    if (why) {
      throw new RyeError('INTEGRITY', `Refusing to open the thread database ${file}: ${why}`, {
        hint: 'The thread databases live inside the project: remove the linked file (a symlink or a hard link; rye recreates the database), then run again.',
        details: { path: file },
      });
    }
  }
}

/**
 * Opens (creating if needed, mode 0600) a database in WAL mode with the busy timeout and foreign
 * keys on, then runs `init` (schema, migrations) in one `BEGIN IMMEDIATE` transaction so that
 * processes opening a fresh store at the same moment do not trip over each other. An existing
 * file whose schema is not exactly what `init` creates is refused (see sqlite-schema-check.ts).
 */
export function openDatabase(
  path: string,
  init: (db: Database) => void,
  busyTimeoutMs: number = BUSY_TIMEOUT_MS,
): Database {
  const Driver = loadDriver();
  refuseLinkedDatabase(path);
  const fresh = !existsSync(path);
  const db = new Driver(path, { timeout: busyTimeoutMs });
  try {
    if (fresh) chmodSync(path, 0o600);
    refuseForeignObjects(Driver, db, path, init);
    db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    enableWal(db, busyTimeoutMs);
    // NORMAL in WAL mode: a commit survives a crash of the process, and a power loss can only
    // drop the last commits, never corrupt; FULL would fsync every spend update.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.transaction(() => initVerifiedSchema(Driver, db, path, init)).immediate();
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Turns WAL on (persistent in the file: after the first open, a cheap no-op). The switch needs the
 * database to itself for a moment and SQLite answers SQLITE_BUSY there without calling the busy
 * handler, so processes opening a fresh store at the same moment retry it, within the busy
 * timeout (a short synchronous wait: this happens only while a store is being created).
 */
function enableWal(db: Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
  }
}

/** SQLite gave up waiting for a lock (busy timeout passed, or a snapshot went stale). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** A PRIMARY KEY or UNIQUE constraint refused an insert. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** ISO-8601 UTC, millisecond precision: sorts as text, parses with `new Date()`. */
export function nowIso(): string {
  return new Date().toISOString();
}
