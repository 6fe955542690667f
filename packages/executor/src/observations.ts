/**
 * One look per operation. Within one `execute`, the same fact about the filesystem (a kind's
 * extractor files, the trust store, a space's real root) is asked for a dozen times: once per
 * chain element and dependency. Inside an operation scope the first answer is reused for the rest
 * of that operation; outside one, every question reaches the filesystem. Nothing carries over
 * between operations, so each operation still sees the files as they are when it starts looking.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { processWide } from './process-wide.js';

// One scope per process, also when this module is bundled into several files: every copy must
// see the operation another copy started.
const scope = processWide('ryeos.executor.observations', () => new AsyncLocalStorage<Map<string, unknown>>());

/** Runs `fn` in an operation scope (a nested call joins the scope it is in). */
export function withinOperation<T>(fn: () => T): T {
  return scope.getStore() ? fn() : scope.run(new Map(), fn);
}

/** The answer already observed in this operation for `key`, else `observe()`'s (remembered). */
export function observedOnce<T>(key: string, observe: () => T): T {
  const seen = scope.getStore();
  if (!seen) return observe();
  if (seen.has(key)) return seen.get(key) as T;
  const value = observe();
  seen.set(key, value);
  return value;
}

/** Whether an operation scope is open (so that observedOnce remembers). */
export function inOperation(): boolean {
  return scope.getStore() !== undefined;
}

/** Runs `fn` outside any operation scope (the run itself, and callbacks it leaves behind). */
export function outsideOperation<T>(fn: () => T): T {
  return scope.exit(fn);
}
