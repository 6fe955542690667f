/**
 * What was verified, remembered while the file stays the same. A file verified before, unchanged
 * since (same device, inode, size, mtime and ctime: ctime moves on every write and cannot be set
 * back), under the same trust store and the same signature rules, is not read, parsed and
 * verified again: the bytes that were verified are reused, so what runs is still exactly what
 * was verified. Anything else (a new stamp, a changed trust store or extractor) verifies afresh.
 */
import { type BigIntStats, statSync } from 'node:fs';
import { processWide } from './process-wide.js';
import type { TrustStore } from './trust.js';

interface Entry {
  stamp: string;
  trustStamp: string;
  rules: object;
  value: unknown;
}

const LIMIT = 4_096;
// Shared by every copy of this module in the process (bundled entry points each carry one).
const memos = processWide(
  'ryeos.executor.verified-memo',
  () => new WeakMap<TrustStore, Map<string, Entry>>(),
);

/** What changes whenever the file's bytes can have changed (from a `bigint: true` stat). */
export function stampOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/** The stamp of the file at `path`; undefined when it cannot be read. */
function fileStamp(path: string): string | undefined {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false });
  return info ? stampOf(info) : undefined;
}

/**
 * `verify()`'s result for `path` (remembered under `key`, per trust store), or a fresh one when
 * the file, the trust store or the `rules` object (a kind's config: its identity changes when
 * its extractor files do) changed. `verify` throws for a file that fails: nothing is remembered.
 * `stamp`: the caller's own stat of `path` (saves a second one), taken before `verify` reads it.
 */
export function rememberVerified<T>(
  context: { trust: TrustStore },
  key: string,
  path: string,
  rules: object,
  verify: () => T,
  stamp: string | undefined = fileStamp(path),
): T {
  let memo = memos.get(context.trust);
  if (!memo) {
    memo = new Map();
    memos.set(context.trust, memo);
  }
  const trustStamp = context.trust.stamp();
  const known = memo.get(key);
  if (stamp && known?.stamp === stamp && known.trustStamp === trustStamp && known.rules === rules)
    return known.value as T;
  const value = verify();
  if (stamp) {
    memo.delete(key);
    if (memo.size >= LIMIT) memo.delete(memo.keys().next().value!);
    memo.set(key, { stamp, trustStamp, rules, value });
  }
  return value;
}
