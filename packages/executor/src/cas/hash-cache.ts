/**
 * Remembers, per space, which item source each unchanged file produced, so a second push of a
 * large project stats its files instead of reading and hashing them all (as git's index does).
 * A file counts as unchanged when its size, inode, mode, mtime and ctime are all the same; a file
 * written in the last two seconds is never remembered, because a change within the clock's
 * granularity would keep the same times. The cache only saves work: an entry is used only when
 * the store still holds its objects, and every byte sent is re-checked against its hash anyway.
 */
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from './hash.js';

interface Entry {
  stamp: string;
  blob: string;
  source: string;
}

const RECENT_NS = 2_000_000_000n;

export class HashCache {
  private readonly previous: Record<string, Entry>;
  private readonly next: Record<string, Entry> = {};
  private readonly file: string;

  constructor(storeRoot: string, space: string, base: string) {
    this.file = join(storeRoot, 'cache', 'manifests', `${sha256Hex(`${space}\0${base}`)}.json`);
    this.previous = readCache(this.file);
  }

  lookup(path: string, stat: BigIntStats): Entry | undefined {
    const entry = this.previous[path];
    return entry && entry.stamp === stampOf(stat) ? entry : undefined;
  }

  remember(path: string, stat: BigIntStats, blob: string, source: string): void {
    const now = BigInt(Date.now()) * 1_000_000n;
    if (now - stat.mtimeNs < RECENT_NS || now - stat.ctimeNs < RECENT_NS) return;
    this.next[path] = { stamp: stampOf(stat), blob, source };
  }

  /** Keeps what this walk saw (and only that: deleted files drop out). */
  save(): void {
    const dir = join(this.file, '..');
    const temp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(temp, JSON.stringify(this.next), { mode: 0o600 });
      renameSync(temp, this.file);
    } catch {
      // A cache that cannot be written only costs the next push some hashing.
      rmSync(temp, { force: true });
    }
  }
}

function stampOf(stat: BigIntStats): string {
  return `${stat.size}:${stat.ino}:${stat.mode}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

function readCache(file: string): Record<string, Entry> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, Entry>)
      : {};
  } catch {
    return {};
  }
}
