/**
 * A cache of values derived from file contents (parsed metadata), keyed by a hash of the bytes
 * and the parser. Identical bytes always parse the same, so an entry can never be stale; that
 * is what lets a cold `rye execute` skip loading the YAML and JavaScript parsers entirely.
 * Memory first, then an optional directory (`<user>/.ai/state/cache/metadata`) whose entries are
 * authenticated with an HMAC keyed by the user's signing key: whoever could forge an entry could
 * already sign items. After both, an optional precomputed source (the signed index a system
 * bundle ships, bundle-index.ts) answers for files whose exact bytes it knows, and its answer is
 * kept on disk too. Disk problems are ignored: the cache is only ever an optimisation.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '@ryeos/lillux';

/**
 * Bump when a parser's output changes shape, so old disk entries are not reused (and a bundle
 * index made by another version is not believed: it records the version it was made with).
 */
export const CACHE_FORMAT_VERSION = 2;
const MEMORY_LIMIT = 2_000;

/**
 * Values derived from files whose exact bytes are known in advance (a system bundle's signed
 * index). `lookup` answers only for a file at `path` whose bytes (`text`; `textHash` is their
 * sha256 when the caller has it) are the ones it knows; undefined otherwise.
 */
export interface PrecomputedSource {
  lookup(namespace: string, path: string, text: string, textHash?: string): unknown;
}

export class ContentCache {
  private readonly memory = new Map<string, unknown>();

  /**
   * @param dir where entries persist (none: memory only)
   * @param secret authenticates disk entries: an entry is only believed when its HMAC matches,
   *   so a file planted in the cache directory can never feed metadata to the executor. Without
   *   a secret nothing is read from or written to disk.
   */
  constructor(
    private readonly dir?: string,
    private readonly secret?: Buffer,
    private readonly source?: PrecomputedSource,
  ) {}

  keyOf(namespace: string, path: string, text: string): string {
    return this.keyOfHash(namespace, path, sha256Hex(text));
  }

  private keyOfHash(namespace: string, path: string, textHash: string): string {
    return sha256Hex(`${CACHE_FORMAT_VERSION}\u0000${namespace}\u0000${path}\u0000${textHash}`);
  }

  /**
   * The precomputed value for exactly this content (a system bundle's index), without computing,
   * remembering or storing anything; undefined when no source knows these bytes.
   */
  precomputed<T>(namespace: string, path: string, text: string): T | undefined {
    return this.source?.lookup(namespace, path, text) as T | undefined;
  }

  /** Returns the cached value for this content, or computes, stores and returns it. */
  derive<T>(namespace: string, path: string, text: string, compute: () => T): T {
    const textHash = sha256Hex(text);
    const key = this.keyOfHash(namespace, path, textHash);
    if (this.memory.has(key)) return this.memory.get(key) as T;
    // The disk before the precomputed source: one small file, where the source may have to load
    // and verify a whole bundle index (~6 ms of a cold `rye execute`) for a few of its entries.
    const fromDisk = this.read(key);
    if (fromDisk !== undefined) {
      this.remember(key, fromDisk);
      return fromDisk as T;
    }
    const known = this.source?.lookup(namespace, path, text, textHash);
    if (known !== undefined) {
      this.remember(key, known);
      this.write(key, known);
      return known as T;
    }
    const value = compute();
    this.remember(key, value);
    this.write(key, value);
    return value;
  }

  private remember(key: string, value: unknown): void {
    if (this.memory.size >= MEMORY_LIMIT) this.memory.delete(this.memory.keys().next().value!);
    this.memory.set(key, value);
  }

  private fileOf(key: string): string | undefined {
    return this.dir && this.secret ? join(this.dir, key.slice(0, 2), `${key}.json`) : undefined;
  }

  private mac(key: string, json: string): string {
    return createHmac('sha256', this.secret!).update(key).update('\u0000').update(json).digest('hex');
  }

  private read(key: string): unknown {
    const file = this.fileOf(key);
    if (!file) return undefined;
    try {
      const entry = JSON.parse(readFileSync(file, 'utf8')) as { mac?: unknown; json?: unknown };
      if (typeof entry.json !== 'string' || typeof entry.mac !== 'string') return undefined;
      const expected = Buffer.from(this.mac(key, entry.json), 'hex');
      const given = Buffer.from(entry.mac, 'hex');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      return JSON.parse(entry.json);
    } catch {
      return undefined;
    }
  }

  private write(key: string, value: unknown): void {
    const file = this.fileOf(key);
    if (!file) return;
    try {
      mkdirSync(join(file, '..'), { recursive: true });
      const temp = `${file}.${process.pid}.tmp`;
      const json = JSON.stringify(value);
      writeFileSync(temp, JSON.stringify({ mac: this.mac(key, json), json }));
      renameSync(temp, file);
    } catch {
      // a read-only or full disk only costs speed
    }
  }
}
