/**
 * The part of better-sqlite3 the store uses, as a local interface: the driver is an optional
 * dependency loaded when a store is opened, so its types never reach the public `.d.ts` and a
 * user who never opens a SQLite store installs no native module.
 */
import { createRequire } from 'node:module';
import { RyeError } from '@ryeos/lillux';

export interface SqliteRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface SqliteStatement {
  run(...params: unknown[]): SqliteRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Answers the first column of each row instead of the row. */
  pluck(toggle?: boolean): this;
}

/** A function wrapped in a transaction; `immediate` takes the write lock before it runs. */
export interface SqliteTransaction<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  immediate(...args: Parameters<F>): ReturnType<F>;
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): this;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<F extends (...args: never[]) => unknown>(fn: F): SqliteTransaction<F>;
  close(): this;
}

/** The driver's constructor (better-sqlite3's default export). */
export type SqliteDriver = new (path: string, options?: { timeout?: number }) => SqliteDatabase;

/** How the driver module is obtained; tests swap it to see what a missing driver does. */
export type DriverLoader = () => unknown;

// better-sqlite3 is CommonJS; createRequire at call time keeps the addon out of module load.
const requireDriver: DriverLoader = () => createRequire(import.meta.url)('better-sqlite3');

let loader: DriverLoader = requireDriver;
let driver: SqliteDriver | undefined;

/** Replaces how the driver is loaded (undefined: the installed better-sqlite3); forgets a loaded one. */
export function setDriverLoader(next: DriverLoader | undefined): void {
  loader = next ?? requireDriver;
  driver = undefined;
}

/**
 * Loads the native driver now (a detached runner does it while it waits for its request). A
 * driver that is not installed, or whose native build is missing or broken, fails with CONFIG
 * naming the package, never with the loader's stack.
 */
export function loadDriver(): SqliteDriver {
  if (driver) return driver;
  let loaded: unknown;
  try {
    loaded = loader();
  } catch (error) {
    throw driverMissing(error);
  }
  if (typeof loaded !== 'function') throw driverMissing(new Error('its module exports no constructor'));
  driver = loaded as SqliteDriver;
  return driver;
}

function driverMissing(cause: unknown): RyeError {
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  return new RyeError(
    'CONFIG',
    `The thread store needs the SQLite driver better-sqlite3, which could not be loaded (${reason})`,
    {
      hint: 'Install it next to @ryeos/threads: npm install better-sqlite3 (where no prebuilt binary is reachable it compiles, which needs a C++ toolchain: make, g++ and python3).',
      details: { package: 'better-sqlite3', install: 'npm install better-sqlite3' },
      cause,
    },
  );
}
