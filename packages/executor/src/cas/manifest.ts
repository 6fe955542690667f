/**
 * Manifests: a space's files as one object. Each file of `.ai/` becomes an `item_source` (what
 * kind of item, its id, its bytes as a blob, its signature line's fields); a project adds the
 * other files its sync policy includes. The manifest's hash names every byte of the space, so
 * two pushes of an unchanged space produce the same hashes and send nothing the second time.
 */
import type { BigIntStats } from 'node:fs';
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { assertHash, isHash } from './hash.js';
import { HashCache } from './hash-cache.js';
import type { ItemSource, ItemSourceType, SignatureInfo, SourceManifest } from './kinds.js';
import type { ObjectStore } from './store.js';
import {
  DEFAULT_SYNC,
  hardSyncPolicy,
  holdsPrivateKey,
  isRuntimeDir,
  isSecretName,
  patternMatcher,
  type SyncPolicy,
} from './sync-policy.js';

export interface ManifestOptions {
  space: 'project' | 'user';
  /** The space base: the folder that holds `.ai/`. */
  base: string;
  sync?: SyncPolicy;
}

export interface BuiltManifest {
  hash: string;
  manifest: SourceManifest;
  /** Every hash the manifest reaches, children before the manifest itself (the order to send them). */
  closure: string[];
  /** Paths left out: links, special files, and files that hold a private key. */
  skipped: string[];
}

const KIND_DIRS: Record<string, ItemSourceType> = {
  directives: 'directive',
  tools: 'tool',
  knowledge: 'knowledge',
};
const SIGNED_LINE =
  /rye:signed:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ):([0-9a-f]{64}):([A-Za-z0-9_\-+/]+={0,2}):([0-9a-f]{16})/;

export function buildManifest(store: ObjectStore, options: ManifestOptions): BuiltManifest {
  const sync = hardSyncPolicy(options.sync ?? DEFAULT_SYNC);
  const excluded = patternMatcher(sync.exclude);
  assertPlainAiDir(options.space, options.base);
  const cache = new HashCache(store.root, options.space, options.base);
  const walk = new Walk(store, options.base, excluded, cache);
  // Runtime folders sit directly under `.ai/`; a `.ai/` nested inside `.ai/` is never a second space.
  walk.dir(
    '.ai',
    (relative, isDir) =>
      isDir && relative.startsWith('.ai/') && (isRuntimeDir(relative.slice(4)) || relative.endsWith('/.ai')),
  );
  if (options.space === 'project') {
    const included = patternMatcher(
      sync.include.filter((pattern) => !pattern.startsWith('.ai/') && pattern !== '.ai'),
    );
    if (sync.include.some((pattern) => !pattern.startsWith('.ai'))) walk.projectFiles(included);
  }
  const manifest: SourceManifest = {
    schema: 1,
    kind: 'source_manifest',
    space: options.space,
    items: walk.items,
    files: walk.files,
  };
  const hash = store.putObject(manifest);
  cache.save();
  return { hash, manifest, closure: [...walk.closure, hash], skipped: walk.skipped };
}

/** Every hash below a stored manifest (item sources, their blobs, file blobs), then the manifest. */
export function manifestClosure(store: ObjectStore, manifestHash: string): string[] {
  const manifest = readManifest(store, manifestHash);
  const closure: string[] = [];
  for (const itemHash of Object.values(manifest.items)) {
    const item = store.getObject<ItemSource>(assertHash(itemHash));
    if (item?.kind !== 'item_source') throw missing(itemHash, 'item source');
    closure.push(assertHash(item.content_blob_hash), itemHash);
  }
  for (const blob of Object.values(manifest.files)) closure.push(assertHash(blob));
  closure.push(manifestHash);
  return closure;
}

export function readManifest(store: ObjectStore, hash: string): SourceManifest {
  const manifest = store.getObject<SourceManifest>(assertHash(hash, 'manifest hash'));
  if (!manifest) throw missing(hash, 'manifest');
  const problem = manifestShapeProblem(manifest);
  if (problem) {
    throw new RyeError('VALIDATION', `Object ${hash} is not a source manifest: ${problem}`, {
      hint: 'Pass the hash a push returned for the project or user space.',
    });
  }
  return manifest;
}

/**
 * A space's `.ai` must be a real folder inside its base: a link (a cloned repository's
 * `.ai -> $HOME`) would make a push carry whatever the link points at.
 */
function assertPlainAiDir(space: string, base: string): void {
  const path = join(base, '.ai');
  let stat: import('node:fs').Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (stat.isSymbolicLink() || !stat.isDirectory()) {
    throw new RyeError(
      'PERMISSION',
      `The ${space} space's ${path} is ${stat.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}; nothing was pushed.`,
      {
        hint: `A space's .ai must be a real folder inside ${base}: replace the link with the folder itself (a cloned repository's linked .ai could point at your home).`,
        details: { space, path },
      },
    );
  }
}

/** Reads a regular file without following a link swapped in after the walk saw it. */
function readPlainFile(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
    throw error;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : undefined;
  } finally {
    closeSync(fd);
  }
}

/** What is wrong with a stored object read as a manifest, or undefined: its maps are walked as hashes. */
function manifestShapeProblem(manifest: SourceManifest): string | undefined {
  if (manifest.kind !== 'source_manifest') return `its kind is ${JSON.stringify(manifest.kind)}`;
  for (const field of ['items', 'files'] as const) {
    const map: unknown = manifest[field];
    if (typeof map !== 'object' || map === null || Array.isArray(map)) {
      return `'${field}' must be an object of path to hash`;
    }
    for (const [path, value] of Object.entries(map)) {
      if (!isHash(value))
        return `'${field}' maps ${JSON.stringify(path.slice(0, 120))} to something not a hash`;
    }
  }
  return undefined;
}

function missing(hash: string, what: string): RyeError {
  return new RyeError('NOT_FOUND', `The ${what} ${hash} is not in the store`, {
    hint: 'Push the space again: a push sends every object a manifest needs.',
  });
}

class Walk {
  readonly items: Record<string, string> = {};
  readonly files: Record<string, string> = {};
  readonly closure: string[] = [];
  readonly skipped: string[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly base: string,
    private readonly excluded: (path: string, isDir: boolean) => boolean,
    private readonly cache: HashCache,
  ) {}

  /** Walks `relative`, leaving out what `skip` or the policy names; files go to the items map. */
  dir(relative: string, skip: (relative: string, isDir: boolean) => boolean): void {
    for (const entry of entriesOf(join(this.base, relative))) {
      const path = `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skip(path, true) && !this.excluded(path, true)) this.dir(path, skip);
      } else if (!isSecretName(entry.name) && !this.excluded(path, false)) {
        if (entry.isFile()) this.addItem(path);
        else this.skipped.push(path);
      }
    }
  }

  /** Files outside `.ai/` that the policy includes. */
  projectFiles(included: (path: string, isDir: boolean) => boolean, relative = ''): void {
    for (const entry of entriesOf(relative ? join(this.base, relative) : this.base)) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (path === '.ai') continue;
      if (entry.isDirectory()) {
        if (!this.excluded(path, true)) this.projectFiles(included, path);
      } else if (included(path, false) && !isSecretName(entry.name) && !this.excluded(path, false)) {
        const bytes = entry.isFile() ? readPlainFile(join(this.base, path)) : undefined;
        if (!bytes) this.skipped.push(path);
        else {
          if (holdsPrivateKey(bytes)) this.skipped.push(path);
          else {
            this.files[path] = this.store.putBlob(bytes);
            this.closure.push(this.files[path]);
          }
        }
      }
    }
  }

  private addItem(path: string): void {
    const full = join(this.base, path);
    const stat = lstatSync(full, { bigint: true });
    const known = this.cache.lookup(path, stat);
    if (known && this.store.has(known.source, 'object') && this.store.has(known.blob, 'blob')) {
      this.record(path, stat, known.blob, known.source);
      return;
    }
    const bytes = readPlainFile(full);
    if (!bytes || holdsPrivateKey(bytes)) {
      this.skipped.push(path);
      return;
    }
    const blob = this.store.putBlob(bytes);
    const signature = signatureInfo(bytes);
    const source: ItemSource = {
      schema: 1,
      kind: 'item_source',
      ...itemIdentity(path),
      content_blob_hash: blob,
      integrity: signature?.hash ?? null,
      signature_info: signature,
      ...((stat.mode & 0o100n) !== 0n ? { executable: true } : {}),
    };
    this.record(path, stat, blob, this.store.putObject(source));
  }

  private record(path: string, stat: BigIntStats, blob: string, source: string): void {
    this.items[path] = source;
    this.closure.push(blob, source);
    this.cache.remember(path, stat, blob, source);
  }
}

function entriesOf(dir: string): import('node:fs').Dirent[] {
  try {
    // Sorted, so a manifest's walk (and the order its objects are sent in) is the same every time.
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

function itemIdentity(path: string): { item_type: ItemSourceType; item_id: string } {
  const segments = path.split('/').slice(1);
  const type = KIND_DIRS[segments[0] ?? ''];
  const rest = type ? segments.slice(1) : segments;
  const leaf = rest.at(-1) ?? '';
  const dot = leaf.lastIndexOf('.');
  rest[rest.length - 1] = dot > 0 ? leaf.slice(0, dot) : leaf;
  return { item_type: type ?? 'config', item_id: rest.join('/') };
}

function signatureInfo(bytes: Buffer): SignatureInfo | null {
  // The signature line sits at the top or the bottom of a file; looking at both ends is enough.
  const text =
    bytes.length > 8192
      ? `${bytes.subarray(0, 4096).toString('utf8')}\n${bytes.subarray(-4096).toString('utf8')}`
      : bytes.toString('utf8');
  const match = SIGNED_LINE.exec(text);
  if (!match) return null;
  const [, timestamp, hash, signature, fingerprint] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  return { timestamp, hash, signature, fingerprint };
}
