/**
 * One indexed item: what its kind's metadata reader says about it, its signature status and
 * the lower-cased text prepared for matching. Items are read as text only, never run.
 */
import { clipText } from '@ryeos/lillux';
import { readerNamespace } from '../bundle-index.js';
import { ContentCache } from '../content-cache.js';
import type { ItemContext, KindReaders, SearchableFields, SearchReader } from '../context.js';
import type { KindConfig } from '../kinds.js';
import type { ToolMetadata } from '../metadata.js';
import { extractToolMetadata, toolNamespace } from '../metadata.js';
import { parameterSummary } from '../parameter-summary.js';
import type { ItemKind } from '../refs.js';
import { canonicalRef } from '../refs.js';
import type { Space, SpaceName } from '../spaces.js';
import { toolParameterSchema } from '../tool-parameters.js';
import { verifyWithConfig } from '../verified-read.js';
import type { DeclaredIdentity } from '../verify.js';
import { pathIdentity } from '../verify.js';
import type { TextDoc } from './match.js';
import { EMPTY_DOC, makeDoc } from './match.js';

export type { SearchableFields, SearchReader } from '../context.js';

export interface IndexEntry {
  kind: ItemKind;
  id: string;
  ref: string;
  extension: string;
  /** Position of the extension in the kind's resolution order (same-space tie-break). */
  extensionRank: number;
  name: string;
  title: string;
  description: string;
  category: string;
  preview: string;
  source: SpaceName;
  path: string;
  metadata: Record<string, unknown>;
  /** Whether the file verifies: checked on first read (results and filters only, see below). */
  readonly signed: boolean;
  /** Its verified hash, when it verifies (checked with `signed`). */
  readonly integrity: string | undefined;
  error?: string;
  /** `created_at` (else `updated_at`) as epoch ms, for sort by date. */
  date: number | undefined;
  nameLower: string;
  /** `id title name description category preview`, prepared. */
  doc: TextDoc;
  /** Per-field prepared text, filled on first use. */
  fieldDocs: Map<string, TextDoc>;
  /** Trust-store state the signature status was computed against. */
  trustStamp: string;
  /** Tools: the declared parameters in a few words each (see parameters.ts), made on first read. */
  readonly parameters: Record<string, string> | undefined;
  /**
   * Tools that cannot be executed on their own, and why (`runtime`, `primitive`, `extractor`,
   * `library`, `no executor`…): hidden from results unless asked for.
   */
  internal?: string;
  /** Id and name prepared for ranking, filled on first use (rank.ts). */
  identity?: unknown;
}

const PREVIEW_LENGTH = 200;

/**
 * The index itself caches what was parsed (by file stamp), so tool metadata is parsed without
 * the executor's content cache: hashing every file and writing thousands of small JSON files on
 * a first search cost more than the parse they would save. Only a system bundle's signed index
 * is asked first (it hashes only the files it holds).
 */
class UncachedContent extends ContentCache {
  override derive<T>(_namespace: string, _path: string, _text: string, compute: () => T): T {
    return compute();
  }
}
let uncached: ContentCache | undefined;
const SIGNATURE_LINE = /^[^\n]*rye:signed:[^\n]*(?:\n|$)/gm;

/** The text without signature lines (they are not content), first 200 characters. */
export function previewOf(text: string): string {
  return clipText(clipText(text, 4096).replace(SIGNATURE_LINE, ''), PREVIEW_LENGTH);
}

function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  return undefined;
}

function stringList(value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value.map((v) => str(v)).filter((v): v is string => v !== undefined);
  if (typeof value === 'string') return [value];
  return undefined;
}

function isPlain(value: unknown): boolean {
  if (value === null) return true;
  if (['string', 'number', 'boolean'].includes(typeof value)) return true;
  return Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v));
}

interface ReadOutcome {
  fields: SearchableFields;
  /** Read from a system bundle's signed index rather than parsed. */
  indexed?: boolean;
  declared?: DeclaredIdentity;
  /** Tools: their parameter summary, made when first shown. */
  parameters?: () => Record<string, string> | undefined;
  internal?: string;
}

/**
 * Tool types that are parts of the machinery rather than tools to call: extractors and parsers
 * describe kinds, primitives end every chain (rye/bash is the tool for a command), runtimes run
 * other tools (called directly they have no tool to run), an MCP server file configures the
 * tools generated from it.
 */
const INTERNAL_TOOL_TYPES = new Set(['extractor', 'parser', 'primitive', 'runtime', 'library', 'mcp_server']);

/**
 * Why a tool cannot be executed on its own, or undefined when it can: an internal tool type, a
 * module under a `lib/` folder (a runtime's or a tool's library, e.g.
 * rye/core/runtimes/node/lib/launch), or no executor to run it (a chain must reach a primitive
 * through one).
 */
export function internalReason(id: string, toolType: unknown, executorId: unknown): string | undefined {
  if (typeof toolType === 'string' && INTERNAL_TOOL_TYPES.has(toolType)) return toolType;
  if (id.split('/').slice(0, -1).includes('lib')) return 'library';
  if (typeof executorId !== 'string' || executorId === '') return 'no executor';
  return undefined;
}

function readTool(
  text: string,
  path: string,
  id: string,
  ext: string,
  config: KindConfig,
  context: ItemContext,
): ReadOutcome {
  const stem = id.slice(id.lastIndexOf('/') + 1);
  const parser = config.parsers[ext];
  if (!parser) {
    // No parser, no metadata: nothing says how to run it.
    return {
      fields: { name: stem, title: stem, preview: previewOf(text) },
      internal: internalReason(id, undefined, undefined),
    };
  }
  uncached ??= new UncachedContent();
  const known = context.cache.precomputed<ToolMetadata>(toolNamespace(parser), path, text);
  const md = known ?? extractToolMetadata(text, path, parser, uncached);
  const metadata: Record<string, unknown> = {};
  // Plain lower-case fields as written (author, tags, …), then the normalised ones on top.
  for (const [key, value] of Object.entries(md.fields)) {
    if (key.startsWith('_') || key !== key.toLowerCase() || !isPlain(value)) continue;
    metadata[key] = value;
  }
  if (md.version !== undefined) metadata.version = md.version;
  if (md.category !== undefined) metadata.category = md.category;
  if (md.toolType !== undefined) metadata.tool_type = md.toolType;
  if (md.executorId !== undefined) metadata.executor_id = md.executorId;
  const tags = stringList(md.fields.tags ?? md.fields.__tags__);
  metadata.tags = tags ?? [];
  const fields: SearchableFields = {
    name: stem,
    title: stem,
    description: md.description ?? '',
    category: md.category ?? '',
    preview: previewOf(text),
    metadata,
  };
  const created = str(md.fields.created_at);
  const updated = str(md.fields.updated_at);
  if (created) fields.created_at = created;
  if (updated) fields.updated_at = updated;
  return {
    fields,
    indexed: known !== undefined,
    declared: { category: md.category },
    parameters: () => {
      const schema = toolParameterSchema(md);
      return schema ? parameterSummary(schema) : undefined;
    },
    internal: internalReason(id, md.toolType, md.executorId),
  };
}

function readWith(input: BuildInput, reader: SearchReader): ReadOutcome {
  const { context, kind, text, path, id } = input;
  // A bundle index's fields count only for the registered reader they were made by.
  const registered: KindReaders | undefined = kind === 'tool' ? undefined : context.readers[kind];
  const readerId = registered?.search === reader ? registered.id : undefined;
  const known = readerId
    ? context.cache.precomputed<SearchableFields>(readerNamespace(kind, readerId), path, text)
    : undefined;
  const raw = known ?? reader(text, path, id) ?? {};
  const stem = id.slice(id.lastIndexOf('/') + 1);
  const name = str(raw.name) ?? stem;
  const fields: SearchableFields = {
    name,
    title: str(raw.title) ?? name,
    description: str(raw.description) ?? '',
    category: str(raw.category) ?? '',
    preview: clipText(str(raw.preview) ?? previewOf(text), PREVIEW_LENGTH),
    metadata: { ...(raw.metadata ?? {}) },
  };
  const metadata = fields.metadata!;
  const version = str(raw.version);
  if (version !== undefined) metadata.version = version;
  if (raw.category !== undefined) metadata.category = fields.category;
  const tags = stringList(raw.tags);
  if (tags) metadata.tags = tags;
  else metadata.tags ??= [];
  const created = str(raw.created_at);
  const updated = str(raw.updated_at);
  if (created) fields.created_at = created;
  if (updated) fields.updated_at = updated;
  const declared: DeclaredIdentity = {};
  if (raw.name !== undefined) declared.name = str(raw.name);
  if (raw.category !== undefined) declared.category = str(raw.category);
  return { fields, declared, indexed: known !== undefined };
}

export interface BuildInput {
  context: ItemContext;
  config: KindConfig;
  kind: ItemKind;
  reader: SearchReader | undefined;
  space: Space;
  path: string;
  id: string;
  extension: string;
  text: string;
  trustStamp: string;
}

export interface Verification {
  signed: boolean;
  integrity?: string;
}

export function verifyQuietly(input: BuildInput, declared: DeclaredIdentity | undefined): Verification {
  try {
    const result = verifyWithConfig(input.context, input.config, input, input.text, { declared });
    return result.verified ? { signed: true, integrity: result.hash } : { signed: false };
  } catch {
    return { signed: false };
  }
}

/**
 * An index entry, with its parameter summary made when first shown and, for an item read from a
 * system bundle's signed index, its signature checked when first asked for: a cold search shows
 * few of a bundle's items, and the check (trust lookup, Ed25519) costs more than all else such an
 * entry needs. Results and filters read `signed` and `integrity` and get what checking at build
 * time gives: the check reads the text the entry was built from (kept until then), and entries
 * are rebuilt whenever the trust store changes.
 */
class Entry {
  #pending: (() => Verification) | undefined;
  #verification: Verification | undefined;
  #summarize: (() => Record<string, string> | undefined) | undefined;
  #parameters: Record<string, string> | undefined;

  /** @param verify the check, or its result when it was made at once */
  constructor(
    verify: Verification | (() => Verification),
    summarize?: () => Record<string, string> | undefined,
  ) {
    if (typeof verify === 'function') this.#pending = verify;
    else this.#verification = verify;
    this.#summarize = summarize;
  }

  /** A tool's parameters in a few words each; undefined for other kinds and tools without any. */
  get parameters(): Record<string, string> | undefined {
    if (this.#summarize) {
      this.#parameters = this.#summarize();
      this.#summarize = undefined;
    }
    return this.#parameters;
  }

  #verified(): Verification {
    if (!this.#verification) {
      this.#verification = this.#pending!();
      this.#pending = undefined;
    }
    return this.#verification;
  }

  get signed(): boolean {
    return this.#verified().signed;
  }

  get integrity(): string | undefined {
    return this.#verified().integrity;
  }
}

/** `created_at`, else `updated_at` (from the reader or the item's metadata), as epoch ms. */
function dateOf(metadata: Record<string, unknown>): number | undefined {
  for (const value of [metadata.created_at, metadata.updated_at]) {
    const text = str(value);
    if (!text) continue;
    const time = Date.parse(text);
    if (!Number.isNaN(time)) return time;
  }
  return undefined;
}

/** Reads one file's metadata (never failing: a malformed item carries `error`). */
export function buildEntry(input: BuildInput): IndexEntry {
  const { id, kind, text, path } = input;
  const stem = id.slice(id.lastIndexOf('/') + 1);
  let outcome: ReadOutcome;
  let error: string | undefined;
  try {
    if (kind === 'tool') outcome = readTool(text, path, id, input.extension, input.config, input.context);
    else if (input.reader) outcome = readWith(input, input.reader);
    else
      outcome = {
        fields: { name: stem, title: stem, category: pathIdentity(id).category, preview: previewOf(text) },
      };
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
    outcome = { fields: { name: stem, title: stem, category: pathIdentity(id).category } };
  }
  const { fields } = outcome;
  const metadata: Record<string, unknown> = { ...(fields.metadata ?? {}) };
  if (fields.created_at !== undefined) metadata.created_at = fields.created_at;
  if (fields.updated_at !== undefined) metadata.updated_at = fields.updated_at;
  // The fields are those of IndexEntry; Entry adds the signature check. The items of a system
  // bundle's index are checked when first shown (a cold search shows few of a bundle's runtimes,
  // extractors and libraries); others now, as parsing them costs more than checking anyway.
  const verify = () => verifyQuietly(input, outcome.declared);
  const entry = new Entry(outcome.indexed ? verify : verify(), outcome.parameters) as unknown as IndexEntry;
  Object.assign(entry, {
    kind,
    id,
    ref: canonicalRef(kind, id),
    extension: input.extension,
    extensionRank: input.config.extensions.indexOf(input.extension),
    name: fields.name ?? stem,
    title: fields.title ?? fields.name ?? stem,
    description: fields.description ?? '',
    category: fields.category ?? '',
    preview: fields.preview ?? '',
    source: input.space.name,
    path,
    metadata,
    date: dateOf(metadata),
    nameLower: (fields.name ?? stem).toLowerCase(),
    doc: EMPTY_DOC,
    fieldDocs: new Map(),
    trustStamp: input.trustStamp,
  });
  if (error !== undefined) entry.error = error;
  // A malformed item is never hidden: its error is what its author needs to see.
  if (outcome.internal !== undefined && error === undefined) entry.internal = outcome.internal;
  // The id too (beyond the spec's list), so that `rye/file-system/read` finds that tool.
  entry.doc = makeDoc(
    [id, entry.title, entry.name, entry.description, entry.category, entry.preview].filter(Boolean).join(' '),
  );
  return entry;
}

const TOP_LEVEL = new Set([
  'id',
  'ref',
  'type',
  'name',
  'title',
  'description',
  'category',
  'preview',
  'source',
  'path',
  'signed',
  'integrity',
  'error',
]);

/** An item's field for filters and `fields`: top-level first (when non-empty), then metadata. */
export function lookupField(entry: IndexEntry, key: string): unknown {
  if (TOP_LEVEL.has(key)) {
    const value = key === 'type' ? entry.kind : (entry as unknown as Record<string, unknown>)[key];
    if (value !== undefined && value !== null && value !== '') return value;
  }
  return entry.metadata[key];
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(textOf).join(' ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Prepared text of one field (`content` = the preview), cached on the entry. */
export function fieldDoc(entry: IndexEntry, field: string): TextDoc {
  let doc = entry.fieldDocs.get(field);
  if (!doc) {
    doc = makeDoc(textOf(field === 'content' ? entry.preview : lookupField(entry, field)));
    entry.fieldDocs.set(field, doc);
  }
  return doc;
}
