/**
 * The content-addressed store: blobs (raw bytes) and objects (canonical JSON), each filed under
 * its SHA-256. Write-once: a file is written to a temporary name and renamed into place, so a
 * reader never sees half of one. The hash is checked on every write (bytes that do not hash to
 * the name they were offered under are refused) and on every read (a file altered on disk is an
 * integrity error, never data).
 *
 * Layout under the root: `blobs/ab/cd/<hash>` and `objects/ab/cd/<hash>.json`.
 */
import { randomBytes } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { canonicalJson } from './canonical-json.js';
import { assertHash, sha256Hex } from './hash.js';
import { CAS_SCHEMA, type CasObject } from './kinds.js';

/** Where a space keeps its objects, relative to the space base (the folder that holds `.ai/`). */
export const OBJECTS_DIR = '.ai/state/objects';

export type EntryKind = 'blob' | 'object';

export interface StoredEntry {
  kind: EntryKind;
  bytes: Buffer;
}

/** What a long-lived store keeps of what it already read and checked (a server reads the same objects every run). */
const READ_CACHE_BYTES = 64 * 1024 * 1024;
const PARSED_CACHE_ENTRIES = 50_000;
const CHECKED_FOLDERS_LIMIT = 4_096;

export class ObjectStore {
  /** Bytes under the root, counted once and then kept up to date by this instance's writes. */
  private storedBytes: number | undefined;
  /**
   * Entries this instance read and found matching their hash, most recent last. A hash names its
   * content, so what was checked once stays right; a file altered on disk later is noticed when
   * it is read again after leaving the cache.
   */
  private readonly checked = new Map<string, Buffer>();
  private checkedBytes = 0;
  /** Objects parsed and checked canonical, deep-frozen: a caller cannot change what others read. */
  private readonly parsed = new Map<string, CasObject>();
  /** Folders this instance made or found real (not symlinks): checked once, not on every write. */
  private readonly checkedFolders = new Set<string>();

  constructor(readonly root: string) {}

  static ofSpace(base: string): ObjectStore {
    return new ObjectStore(join(base, OBJECTS_DIR));
  }

  putBlob(bytes: Uint8Array | string): string {
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    const hash = sha256Hex(data);
    this.write(this.pathOf(hash, 'blob'), data);
    return hash;
  }

  putObject(value: CasObject): string {
    const text = canonicalJson(checkedObject(value));
    const hash = sha256Hex(text);
    this.write(this.pathOf(hash, 'object'), Buffer.from(text, 'utf8'));
    return hash;
  }

  /**
   * Stores bytes received from elsewhere under the hash they were sent with. Refused, with
   * nothing written, when they do not hash to it or (for an object) are not canonical JSON of an
   * object with a schema and a kind: a second text of the same object would get a second hash.
   */
  putEntry(hash: string, kind: EntryKind, bytes: Uint8Array): void {
    assertHash(hash);
    const actual = sha256Hex(bytes);
    if (actual !== hash) {
      throw new RyeError('INTEGRITY', `Content does not match its hash ${hash} (it hashes to ${actual})`, {
        hint: 'The sender altered or truncated the bytes; send them again from a store that verifies.',
      });
    }
    if (kind === 'object') parseCanonicalObject(hash, Buffer.from(bytes));
    else if (kind !== 'blob')
      throw new RyeError('VALIDATION', `Unknown entry kind '${String(kind)}'`, {
        hint: 'Use "blob" or "object".',
      });
    this.write(this.pathOf(hash, kind), bytes);
  }

  /** Which kind of entry the store holds under `hash`; with `kind`, only that kind is looked for. */
  has(hash: string, kind?: EntryKind): EntryKind | undefined {
    assertHash(hash);
    if (kind) return exists(this.pathOf(hash, kind)) ? kind : undefined;
    if (exists(this.pathOf(hash, 'object'))) return 'object';
    if (exists(this.pathOf(hash, 'blob'))) return 'blob';
    return undefined;
  }

  getBlob(hash: string): Buffer | undefined {
    return this.read(hash, 'blob');
  }

  getObject<T = CasObject>(hash: string): T | undefined {
    const known = this.parsed.get(hash);
    if (known) return known as T;
    const bytes = this.read(hash, 'object');
    if (bytes === undefined) return undefined;
    const object = deepFreeze(parseCanonicalObject(hash, bytes));
    if (this.parsed.size >= PARSED_CACHE_ENTRIES) this.parsed.delete(this.parsed.keys().next().value!);
    this.parsed.set(hash, object);
    return object as T;
  }

  getEntry(hash: string): StoredEntry | undefined {
    const kind = this.has(hash);
    if (!kind) return undefined;
    const bytes = this.read(hash, kind);
    return bytes === undefined ? undefined : { kind, bytes };
  }

  sizeBytes(): number {
    this.storedBytes ??= totalSize(this.root);
    return this.storedBytes;
  }

  private pathOf(hash: string, kind: EntryKind): string {
    assertHash(hash);
    const dir = join(this.root, kind === 'blob' ? 'blobs' : 'objects', hash.slice(0, 2), hash.slice(2, 4));
    return join(dir, kind === 'blob' ? hash : `${hash}.json`);
  }

  private read(hash: string, kind: EntryKind): Buffer | undefined {
    const cacheKey = `${kind}:${hash}`;
    const known = this.checked.get(cacheKey);
    if (known) {
      this.checked.delete(cacheKey);
      this.checked.set(cacheKey, known);
      return Buffer.from(known);
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.pathOf(hash, kind));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    if (sha256Hex(bytes) !== hash) {
      throw new RyeError(
        'INTEGRITY',
        `Stored ${kind} ${hash} was altered on disk (its bytes no longer match its hash)`,
        {
          hint: `Delete ${this.pathOf(hash, kind)} and fetch or push it again.`,
        },
      );
    }
    this.remember(cacheKey, bytes);
    return Buffer.from(bytes);
  }

  private remember(cacheKey: string, bytes: Buffer): void {
    if (bytes.byteLength > READ_CACHE_BYTES / 16) return;
    this.checked.set(cacheKey, bytes);
    this.checkedBytes += bytes.byteLength;
    while (this.checkedBytes > READ_CACHE_BYTES) {
      const [oldest, dropped] = this.checked.entries().next().value!;
      this.checked.delete(oldest);
      this.checkedBytes -= dropped.byteLength;
    }
  }

  /**
   * Makes the folders from the root down to `dir`, one level at a time, refusing any that is a
   * symlink: a repository could plant `objects/ab/cd -> elsewhere` for a hash it can predict.
   */
  private makeFolders(dir: string): void {
    if (this.checkedFolders.has(dir)) return;
    if (this.checkedFolders.size === 0) mkdirSync(this.root, { recursive: true, mode: 0o700 });
    let current = this.root;
    for (const segment of relative(this.root, dir).split(sep)) {
      current = join(current, segment);
      let stat = lstatSync(current, { throwIfNoEntry: false });
      if (!stat) {
        try {
          mkdirSync(current, { mode: 0o700 });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        stat = lstatSync(current);
      }
      if (!stat.isDirectory()) {
        throw new RyeError(
          'INTEGRITY',
          `Refusing to write under ${current}: it is not a real folder (a symlink?)`,
          {
            hint: 'The object store writes only inside its own folder: replace it with a real folder (or remove it).',
          },
        );
      }
    }
    if (this.checkedFolders.size >= CHECKED_FOLDERS_LIMIT) this.checkedFolders.clear();
    this.checkedFolders.add(dir);
  }

  private write(path: string, bytes: Uint8Array): void {
    // Write-once: a file already there with the right size is this content (reads re-check the
    // hash); one of another size is a damaged copy and is replaced.
    const present = statSync(path, { throwIfNoEntry: false });
    if (present?.isFile() && present.size === bytes.byteLength) return;
    const dir = dirname(path);
    this.makeFolders(dir);
    const temp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      writeFileSync(temp, bytes, { flag: 'wx', mode: 0o600 });
      renameSync(temp, path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    if (this.storedBytes !== undefined) this.storedBytes += bytes.byteLength - (present?.size ?? 0);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function checkedObject(value: CasObject): CasObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new RyeError('VALIDATION', 'A stored object must be a JSON object', {
      hint: 'Store raw bytes with putBlob.',
    });
  }
  if (value.schema !== CAS_SCHEMA || typeof value.kind !== 'string' || value.kind === '') {
    throw new RyeError('VALIDATION', `A stored object needs "schema": ${CAS_SCHEMA} and a "kind"`, {
      hint: 'Add both fields; they tell a reader what the object is.',
    });
  }
  return value;
}

function parseCanonicalObject(hash: string, bytes: Buffer): CasObject {
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notCanonical(hash, 'it is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw notCanonical(hash, 'it is not a JSON object');
  const object = value as CasObject;
  if (object.schema !== CAS_SCHEMA || typeof object.kind !== 'string')
    throw notCanonical(hash, 'it has no schema 1 and kind');
  if (canonicalJson(object) !== text) throw notCanonical(hash, 'it is not in canonical form');
  return object;
}

function notCanonical(hash: string, why: string): RyeError {
  return new RyeError('INTEGRITY', `Object ${hash} is refused: ${why}`, {
    hint: 'Objects are canonical JSON (sorted keys, no spaces, non-ASCII as \\uXXXX) with "schema": 1 and a "kind".',
  });
}

function exists(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isFile() === true;
}

/** Bytes of every file below `dir`, walked with a list rather than recursion: no depth can overflow the stack. */
function totalSize(dir: string): number {
  let total = 0;
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(next, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    for (const entry of entries) {
      const path = join(next, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) total += statSync(path).size;
    }
  }
  return total;
}
