/**
 * A system bundle's signed index (issue 12, cold paths): what the executor would parse out of each
 * of the bundle's files — tool metadata, extractor configs, the search fields of directives and
 * knowledge — computed when the bundle is signed and shipped beside it as `.ai/bundle.index`, so
 * a cold `search` or `execute` does not load a parser for system items.
 *
 * The file is the index's JSON under one signature line (`# rye:signed:…`, the items' own
 * format): one line per bundle file, `"<path in .ai/>": {"sha256": <hash of its exact bytes>,
 * "values": {<namespace>: <value>}}`. It is believed only when
 * - it lies in a system bundle (`<bundle>/.ai/bundle.index`): a project or user space never
 *   supplies one, and their trust stores play no part;
 * - its whole text verifies (new recipe) with a key trusted by that bundle's own trust store
 *   (`<bundle>/.ai/config/keys/trusted/`), i.e. the bundle key;
 * - it was made for this executor's parser outputs (`cache_format`).
 * Even then an entry is used only for bytes whose sha256 is the entry's hash, read at that very
 * path, under the namespace (parser name, reader id) the caller asks for. Anything else — no
 * index, a stale, unsigned, tampered or malformed one, an edited file — is a miss: the caller
 * parses, as without an index (a note on stderr with RYE_DEBUG). Never an error, never another
 * answer than parsing would give.
 */
import { isUtf8 } from 'node:buffer';
import type { Dirent } from 'node:fs';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { SignatureFormat } from '@ryeos/lillux';
import { monotonicMs, sha256Hex, signableContent, verifyContent } from '@ryeos/lillux';
import type { PrecomputedSource } from './content-cache.js';
import { CACHE_FORMAT_VERSION } from './content-cache.js';
import type { ItemReaders } from './context.js';
import type { KindConfig } from './kinds.js';
import { emptyKindConfig, extractorId, mergeExtractor } from './kinds.js';
import { parseToolMetadata, toolNamespace } from './metadata.js';
import { parseYamlDocument } from './parsers/yaml.js';
import type { SignableKind } from './refs.js';
import { SIGNABLE_KINDS, TYPE_DIRS } from './refs.js';
import type { Space } from './spaces.js';
import type { TrustStore } from './trust.js';

/**
 * The namespace of a YAML file's whole document as a non-empty mapping (`parseYamlDocument`): the
 * bundle's config files and YAML tools, which a higher layer reads as data (agent config, providers).
 */
export const YAML_DOCUMENT_NAMESPACE = 'yaml:document';

/** The index's file name inside a bundle's `.ai/` (no type folder: never an item). */
export const BUNDLE_INDEX_FILE = 'bundle.index';

/** How the index carries its signature: the first line, `# rye:signed:…`. */
export const BUNDLE_INDEX_SIGNATURE: Readonly<SignatureFormat> = Object.freeze({
  prefix: '#',
  afterShebang: false,
});

const INDEX_FORMAT = 'ryeos-bundle-index/1';
/** An index larger than this is not read (a bundle of thousands of items stays far below). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
const EXTRACTOR_NAMESPACE = 'extractor';
/** How long a lookup trusts the last check of an index's files (see `load`). */
const RECHECK_MS = 1_000;
/** Folders never holding items (as the search index skips them). */
const SKIP_DIRS = new Set(['node_modules', '__pycache__']);

/** Where a bundle's index lives: `<root>/.ai/bundle.index`. */
export function bundleIndexPath(root: string): string {
  return join(root, '.ai', BUNDLE_INDEX_FILE);
}

/** The namespace of a kind's search-reader output, tied to the readers' id. */
export function readerNamespace(kind: string, readerId: string): string {
  return `search:${kind}:${readerId}`;
}

export interface BundleIndexOptions {
  /** The readers of directives and knowledge (with an `id`), whose search fields are indexed. */
  readers?: ItemReaders;
  /**
   * The bundle root whose extractors decide which parser reads which extension (default: this
   * bundle's own); a layer bundle without extractors is indexed with the executor bundle's.
   */
  extractorsRoot?: string;
}

interface IndexFile {
  sha256: string;
  values: Map<string, unknown>;
}

function* filesUnder(dir: string, rel: string): Generator<{ rel: string; path: string }> {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const childRel = `${rel}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) yield* filesUnder(path, childRel);
    } else if (entry.isFile()) yield { rel: childRel, path };
  }
}

/** A path no bundle lives at: values that change with the bundle's location are left out. */
const PROBE_AI = join(resolve('/'), 'ryeos-bundle-index-probe', '.ai');

/**
 * The index of the bundle at `root` (the folder holding `.ai/`), unsigned: deterministic text,
 * one line per file, to be signed with the bundle key (`signContent(text, {format:
 * BUNDLE_INDEX_SIGNATURE, keyPair})`). Only the bundle's own extractors decide which parser reads
 * which extension; values are kept only when they do not depend on where the bundle lies and
 * survive JSON unchanged. Files that do not parse are left out (they are parsed, and their error
 * reported, when used).
 */
export function bundleIndexText(root: string, options: BundleIndexOptions = {}): string {
  const ai = join(resolve(root), '.ai');
  const files = new Map<string, { sha256: string; values: Record<string, unknown> }>();
  const texts = new Map<string, string>();
  const textOf = (rel: string, path: string): string | undefined => {
    if (!texts.has(rel)) {
      const bytes = readFileSync(path);
      if (!isUtf8(bytes)) return undefined;
      texts.set(rel, bytes.toString('utf8'));
    }
    return texts.get(rel);
  };
  const add = (
    rel: string,
    path: string,
    namespace: string,
    compute: (text: string, at: string) => unknown,
  ) => {
    const text = textOf(rel, path);
    if (text === undefined) return;
    let value: unknown;
    let elsewhere: unknown;
    try {
      value = compute(text, path);
      elsewhere = compute(text, PROBE_AI + rel.split('/').join(sep));
    } catch {
      return;
    }
    const json = JSON.stringify(value);
    if (json === undefined || json !== JSON.stringify(elsewhere)) return;
    const copy: unknown = JSON.parse(json);
    if (!isDeepStrictEqual(copy, value)) return;
    let file = files.get(rel);
    if (!file) {
      file = { sha256: sha256Hex(text), values: {} };
      files.set(rel, file);
    }
    file.values[namespace] = copy;
  };

  const configs = new Map<SignableKind, KindConfig>();
  const extractorsAi = options.extractorsRoot ? join(resolve(options.extractorsRoot), '.ai') : ai;
  for (const kind of SIGNABLE_KINDS) {
    const rel = `/${TYPE_DIRS.tool}/${extractorId(kind)}.yaml`;
    const path = join(extractorsAi, rel);
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) continue;
    let data: unknown;
    if (extractorsAi === ai) {
      add(rel, path, EXTRACTOR_NAMESPACE, (text, at) => parseYamlDocument(text, at));
      data = files.get(rel)?.values[EXTRACTOR_NAMESPACE];
    } else {
      data = parseYamlDocument(readFileSync(path, 'utf8'), path);
    }
    if (!data) continue;
    const config = emptyKindConfig(kind);
    mergeExtractor(config, data as Record<string, unknown>, path);
    configs.set(kind, config);
  }

  const tools = configs.get('tool');
  if (tools) {
    for (const { rel, path } of filesUnder(join(ai, TYPE_DIRS.tool), `/${TYPE_DIRS.tool}`)) {
      const parser = tools.parsers[extensionOf(rel)];
      if (!parser) continue;
      add(rel, path, toolNamespace(parser), (text, at) => parseToolMetadata(text, at, parser));
    }
  }
  addYamlDocuments(ai, add);
  for (const kind of ['directive', 'knowledge'] as const) {
    const config = configs.get(kind);
    const readers = options.readers?.[kind];
    const reader = readers?.search;
    if (!config || !reader || !readers.id) continue;
    const namespace = readerNamespace(kind, readers.id);
    const typeRel = `/${TYPE_DIRS[kind]}`;
    for (const { rel, path } of filesUnder(join(ai, TYPE_DIRS[kind]), typeRel)) {
      const extension = extensionOf(rel);
      if (!config.extensions.includes(extension)) continue;
      const id = rel.slice(typeRel.length + 1, rel.length - extension.length);
      add(rel, path, namespace, (text, at) => reader(text, at, id));
    }
  }

  const lines = [...files.keys()].sort().map((rel) => {
    const file = files.get(rel)!;
    const values = Object.fromEntries(
      Object.keys(file.values)
        .sort()
        .map((ns) => [ns, file.values[ns]]),
    );
    // Paths are stored without the leading slash: `tools/rye/bash.js`.
    return `${JSON.stringify(rel.slice(1))}:${JSON.stringify({ sha256: file.sha256, values })}`;
  });
  return `{"format":${JSON.stringify(INDEX_FORMAT)},"cache_format":${CACHE_FORMAT_VERSION},"files":{\n${lines.join(',\n')}\n}}\n`;
}

/**
 * Indexes the whole document of each YAML config file (trust-store keys aside) and YAML tool, so a
 * thread's first start reads its agent config and providers without loading the YAML parser. An
 * empty document is left out: its readers tell it from an empty mapping.
 */
function addYamlDocuments(
  ai: string,
  add: (rel: string, path: string, namespace: string, compute: (text: string, at: string) => unknown) => void,
): void {
  const document = (text: string, at: string): Record<string, unknown> => {
    const value = parseYamlDocument(text, at);
    if (Object.keys(value).length === 0) throw new Error('an empty document is not indexed');
    return value;
  };
  for (const kind of ['config', 'tool'] as const) {
    const typeRel = `/${TYPE_DIRS[kind]}`;
    for (const { rel, path } of filesUnder(join(ai, TYPE_DIRS[kind]), typeRel)) {
      if (kind === 'config' && rel.startsWith(`${typeRel}/keys/`)) continue;
      if (extensionOf(rel) === '.yaml' || extensionOf(rel) === '.yml')
        add(rel, path, YAML_DOCUMENT_NAMESPACE, document);
    }
  }
}

function extensionOf(rel: string): string {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot);
}

/** Whether a space's index is believed, and if not, why. */
export type BundleIndexStatus =
  | { status: 'ok'; path: string; files: number; fingerprint: string }
  | {
      status: 'absent' | 'unsigned' | 'modified' | 'untrusted' | 'bad_signature' | 'malformed' | 'outdated';
      path: string;
      reason: string;
    };

interface Loaded {
  /** Stats of the index file and of the key file that vouched for it. */
  stamp: string;
  /** When the stamp was last compared with the files (monotonicMs()). */
  checkedAt: number;
  keyPath: string | undefined;
  status: BundleIndexStatus;
  files: Map<string, IndexFile> | undefined;
}

function statStamp(path: string | undefined): string {
  if (!path) return '';
  const info = statSync(path, { throwIfNoEntry: false });
  return info ? `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}` : '-';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The index's files as maps; undefined when any part is not what `bundleIndexText` writes. */
function filesOf(data: unknown): Map<string, IndexFile> | undefined {
  if (!isRecord(data) || !isRecord(data.files)) return undefined;
  const files = new Map<string, IndexFile>();
  for (const [rel, file] of Object.entries(data.files)) {
    if (!isRecord(file) || typeof file.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(file.sha256))
      return undefined;
    if (!isRecord(file.values)) return undefined;
    files.set(rel, { sha256: file.sha256, values: new Map(Object.entries(file.values)) });
  }
  return files;
}

/**
 * The indexes of the system bundles of one executor, as a precomputed source for its content
 * cache. Each is read and verified on first use and again whenever its file or the key file that
 * vouched for it changes.
 */
export class BundleIndexes implements PrecomputedSource {
  private readonly loaded = new Map<Space, Loaded>();
  private prefixes: { prefix: string; space: Space }[] | undefined;

  /**
   * @param spaces the system bundles whose own indexes count (never a project or user space)
   * @param note where to say why an index is not used (RYE_DEBUG); silent by default
   */
  constructor(
    private readonly spaces: readonly Space[],
    private readonly trust: TrustStore,
    private readonly note?: (message: string) => void,
  ) {}

  /** The value of `namespace` for the file at `path` with exactly these bytes, if indexed. */
  lookup(namespace: string, path: string, text: string, textHash?: string): unknown {
    const owner = this.ownerOf(path);
    if (!owner) return undefined;
    const file = this.load(owner.space, false).files?.get(owner.rel);
    if (!file?.values.has(namespace)) return undefined;
    if ((textHash ?? sha256Hex(text)) !== file.sha256) return undefined;
    return file.values.get(namespace);
  }

  /** Whether this bundle's index is believed (re-checked now), and if not, why. */
  status(space: Space): BundleIndexStatus {
    return this.load(space).status;
  }

  /** The bundle whose `.ai/` holds `path` (the innermost), and the path inside it. */
  private ownerOf(path: string): { space: Space; rel: string } | undefined {
    if (!this.prefixes) {
      const prefixes: { prefix: string; space: Space }[] = [];
      for (const space of this.spaces) {
        if (space.name !== 'system') continue;
        const ai = join(space.base, '.ai');
        prefixes.push({ prefix: ai + sep, space });
        try {
          const real = realpathSync(ai);
          if (real !== ai) prefixes.push({ prefix: real + sep, space });
        } catch {
          // no .ai folder: nothing to index
        }
      }
      this.prefixes = prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
    }
    for (const { prefix, space } of this.prefixes) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length);
      return { space, rel: sep === '/' ? rest : rest.split(sep).join('/') };
    }
    return undefined;
  }

  private load(space: Space, recheck = true): Loaded {
    const path = bundleIndexPath(space.base);
    const previous = this.loaded.get(space);
    // Lookups re-check the files at most every RECHECK_MS: an index is authentic whenever it was
    // read, and each entry is checked against the bytes at hand, so an index replaced meanwhile
    // only means misses (or the previous version's answers for the bytes it knew) until then.
    if (previous && !recheck && monotonicMs() - previous.checkedAt < RECHECK_MS) return previous;
    const stamp = `${statStamp(path)}|${statStamp(previous?.keyPath)}`;
    if (previous && previous.stamp === stamp) {
      previous.checkedAt = monotonicMs();
      return previous;
    }
    const loaded = this.read(space, path);
    loaded.stamp = `${statStamp(path)}|${statStamp(loaded.keyPath)}`;
    loaded.checkedAt = monotonicMs();
    this.loaded.set(space, loaded);
    if (loaded.status.status !== 'ok' && loaded.status.status !== 'absent') {
      this.note?.(`ryeos: ignoring ${path} (${loaded.status.reason}); system items are parsed instead`);
    }
    return loaded;
  }

  private read(space: Space, path: string): Loaded {
    const fail = (status: Exclude<BundleIndexStatus['status'], 'ok'>, reason: string): Loaded => ({
      stamp: '',
      checkedAt: 0,
      keyPath: undefined,
      status: { status, path, reason },
      files: undefined,
    });
    let bytes: Buffer;
    try {
      const info = statSync(path, { throwIfNoEntry: false });
      if (!info?.isFile()) return fail('absent', 'no index');
      if (info.size > MAX_INDEX_BYTES) return fail('malformed', `larger than ${MAX_INDEX_BYTES} bytes`);
      bytes = readFileSync(path);
    } catch (error) {
      return fail('absent', `unreadable: ${(error as Error).message}`);
    }
    if (!isUtf8(bytes)) return fail('malformed', 'not UTF-8 text');
    const text = bytes.toString('utf8');
    let key: { path: string } | undefined;
    const result = verifyContent(text, {
      format: BUNDLE_INDEX_SIGNATURE,
      legacyRecipe: 'tool',
      // Only the bundle's own trust store vouches for its index.
      resolveKey: (fp) => (key = this.trust.lookupInSpace(fp, space)),
    });
    if (result.status !== 'ok') {
      const reasons = {
        unsigned: 'no signature line',
        modified: 'changed since it was signed',
        untrusted: `signed by ${result.fingerprint}, a key the bundle does not trust`,
        bad_signature: 'the signature does not verify',
      } as const;
      return fail(result.status, reasons[result.status]);
    }
    if (result.recipe !== 'full') return fail('bad_signature', 'not signed over its whole text');
    let data: unknown;
    try {
      data = JSON.parse(signableContent(text, BUNDLE_INDEX_SIGNATURE));
    } catch {
      return fail('malformed', 'not JSON');
    }
    if (!isRecord(data) || data.format !== INDEX_FORMAT) return fail('outdated', 'another index format');
    if (data.cache_format !== CACHE_FORMAT_VERSION) return fail('outdated', 'made for other parser outputs');
    const files = filesOf(data);
    if (!files) return fail('malformed', 'unexpected structure');
    return {
      stamp: '',
      checkedAt: 0,
      keyPath: key?.path,
      status: { status: 'ok', path, files: files.size, fingerprint: result.fingerprint ?? '' },
      files,
    };
  }
}
