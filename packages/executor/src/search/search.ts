/**
 * `search` (spec interfaces §2.1): keyword search over the items of one kind in the local
 * spaces, with the query language of query.ts, per-field sub-queries, metadata filters, fuzzy
 * and proximity matching, shadow annotations and pagination. Registry providers are not
 * consulted here (`registry` lists nothing, `all` = local).
 *
 * Departures from the spec's letter, for results an agent can act on (issue 11):
 * - Ranking: the score says how well an item answers the query, an exact name or id segment
 *   first (rank.ts), in place of the spec's normalised field-weight sum, which ranked a tool
 *   whose description says "read … files" above one named `read` in `file-system`.
 * - Items scoring 0 (matched only in a tool's source text) are not results.
 * - Tools that cannot be executed on their own (runtimes, primitives, extractors, libraries,
 *   tools without an executor) are hidden unless `include_internal` is true or a `tool_type`
 *   filter asks for them; `hidden` counts them.
 * - Results are compact: no raw preview, metadata block or hash (load gives those); the file's
 *   path and the item's declared version, so two copies of an id can be told apart; a tool
 *   shows its parameters in a few words each, a directive its inputs.
 */
import { RyeError } from '@ryeos/lillux';
import type { ItemContext } from '../context.js';
import type { ItemKind } from '../refs.js';
import { ambiguousItemError } from '../resolve.js';
import type { Space, SpaceName } from '../spaces.js';
import type { IndexEntry } from './entry.js';
import { fieldDoc, lookupField } from './entry.js';
import { compileFilters } from './filters.js';
import type { RootSnapshot } from './index-cache.js';
import { searchIndexOf } from './index-cache.js';
import { proximityMatches } from './match.js';
import type { QueryNode } from './query.js';
import { evaluate, parseQuery, queryTerms } from './query.js';
import type { Leaf, RankFields } from './rank.js';
import { positiveLeaves, rankFields, rankScoreWith } from './rank.js';
import { parseScope, type SearchScope } from './scope.js';

export type SearchSpace = 'project' | 'user' | 'system' | 'local' | 'registry' | 'all';
export type SearchSort = 'score' | 'name' | 'date';

export interface SearchRequest {
  scope: SearchScope;
  query?: string;
  space?: SearchSpace;
  limit?: number;
  offset?: number;
  sort_by?: SearchSort;
  fields?: Record<string, string>;
  filters?: Record<string, unknown>;
  fuzzy?: { enabled?: boolean; max_distance?: number };
  proximity?: { enabled?: boolean; max_distance?: number };
  /** Also list tools that cannot be executed on their own (runtimes, primitives, …). */
  include_internal?: boolean;
}

/**
 * One result, compact: what an agent needs to pick an item and call it. `load` gives the
 * content and metadata.
 */
export interface SearchResult {
  id: string;
  /** Canonical `kind:id`: what load and execute take. */
  ref: string;
  type: ItemKind;
  name: string;
  /** Only when it says more than the name (knowledge titles). */
  title?: string;
  description: string;
  category: string;
  source: SpaceName;
  /** The item's file (absolute). */
  path: string;
  /** The version the item declares, when it declares one. */
  version?: string;
  score: number;
  signed: boolean;
  /** Tools: each declared parameter in a few words (`{path: "string, required — …"}`). */
  parameters?: Record<string, string>;
  /** Directives: the names of their inputs. */
  inputs?: string[];
  /** Shown with include_internal: why the tool is not called directly (`runtime`, `library`…). */
  internal?: string;
  error?: string;
  shadows?: { space: string }[];
  shadowed_by?: string;
}

// A type, not an interface: it stays assignable to the generic `Envelope`.
export type SearchResponse = {
  status: 'success';
  results: SearchResult[];
  total: number;
  query: string;
  scope: SearchScope;
  space: SearchSpace;
  limit: number;
  offset: number;
  search_type: 'keyword';
  /** Matching tools left out because they cannot be executed on their own (when any). */
  hidden?: number;
  /** How to see the hidden ones (when any). */
  hint?: string;
};

/** Weights when the kind's extractor declares no `search_fields`. */
export const DEFAULT_FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  title: 3,
  name: 3,
  description: 2,
  category: 1.5,
  content: 1,
};

const SPACES: readonly SearchSpace[] = ['project', 'user', 'system', 'local', 'registry', 'all'];
const SORTS: readonly SearchSort[] = ['score', 'name', 'date'];
const DEFAULT_LIMIT = 10;
const DEFAULT_FUZZY_DISTANCE = 2;
const DEFAULT_PROXIMITY_DISTANCE = 5;
/** Candidates from which ranking reads term strengths from the postings. */
const POSTINGS_RANKING_FROM = 256;
const SOURCE_ORDER: Record<SpaceName, number> = { project: 0, user: 1, system: 2 };

function invalid(message: string, hint: string): RyeError {
  return new RyeError('VALIDATION', message, { hint });
}

function count(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalid(
      `${name} must be a non-negative integer (got ${JSON.stringify(value)})`,
      `Pass e.g. ${name}: ${fallback}`,
    );
  }
  return value;
}

function options(value: unknown, name: string): { enabled?: unknown; max_distance?: unknown } {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(
      `${name} must be an object {enabled, max_distance}`,
      `Pass e.g. ${name}: {"enabled": true}`,
    );
  }
  return value as { enabled?: unknown; max_distance?: unknown };
}

function distance(
  value: { enabled?: unknown; max_distance?: unknown },
  name: string,
  fallback: number,
): number {
  if (value.enabled !== true) return 0;
  return count(value.max_distance, `${name}.max_distance`, fallback);
}

interface Prepared {
  query: string;
  ast: QueryNode;
  listAll: boolean;
  fields: [string, QueryNode][];
  filters: ReturnType<typeof compileFilters>;
  fuzzy: number;
  proximity: { terms: string[]; distance: number } | undefined;
  /** Positive leaves of the query and of the `fields` sub-queries, for ranking. */
  leaves: Leaf[];
  rank: RankFields;
  showInternal: boolean;
}

/**
 * Internal tools are listed when asked for: `include_internal`, or a `tool_type` filter or field
 * that selects a type (`{"tool_type": "runtime"}`; a negation such as `!http` selects none).
 */
function showsInternal(request: SearchRequest, fields: [string, QueryNode][]): boolean {
  const flag = request.include_internal;
  if (flag !== undefined && flag !== null && typeof flag !== 'boolean') {
    throw invalid(
      'include_internal must be a boolean',
      'Pass include_internal: true to list runtimes, primitives, extractors and libraries too.',
    );
  }
  if (flag === true) return true;
  if (fields.some(([field]) => field === 'tool_type')) return true;
  const filters = request.filters as Record<string, unknown> | undefined;
  const toolType = filters && typeof filters === 'object' ? filters.tool_type : undefined;
  if (Array.isArray(toolType)) return toolType.length > 0;
  return (
    toolType !== undefined && toolType !== null && !(typeof toolType === 'string' && toolType.startsWith('!'))
  );
}

function prepare(
  request: SearchRequest,
  kind: ItemKind,
  searchFields: Record<string, number> | undefined,
): Prepared {
  if (request.query !== undefined && request.query !== null && typeof request.query !== 'string') {
    throw invalid('query must be a string', 'Pass a keyword query, e.g. "read file"; "*" or "" lists all.');
  }
  const query = request.query ?? '';
  // `*` alone lists everything, like the empty query.
  const listAll = query.trim() === '' || query.trim() === '*';
  const ast = listAll ? parseQuery('') : parseQuery(query);
  const rawFields = request.fields ?? {};
  if (typeof rawFields !== 'object' || Array.isArray(rawFields)) {
    throw invalid('fields must be an object of {field: query}', 'For example {"category": "rye/core"}');
  }
  const fields = Object.entries(rawFields).map(([field, q]): [string, QueryNode] => {
    if (typeof q !== 'string')
      throw invalid(`fields.${field} must be a query string`, 'For example {"name": "read*"}');
    return [field, parseQuery(q)];
  });
  const fuzzy = distance(options(request.fuzzy, 'fuzzy'), 'fuzzy', DEFAULT_FUZZY_DISTANCE);
  const proximityOptions = options(request.proximity, 'proximity');
  const proximity =
    proximityOptions.enabled === true
      ? {
          terms: queryTerms(ast),
          distance: count(
            proximityOptions.max_distance,
            'proximity.max_distance',
            DEFAULT_PROXIMITY_DISTANCE,
          ),
        }
      : undefined;
  const weights = Object.entries(
    searchFields && Object.keys(searchFields).length ? searchFields : DEFAULT_FIELD_WEIGHTS,
  ).filter((pair): pair is [string, number] => typeof pair[1] === 'number' && Number.isFinite(pair[1]));
  const leaves = listAll ? [] : positiveLeaves(ast);
  for (const [, fieldAst] of fields) positiveLeaves(fieldAst, leaves);
  return {
    query,
    ast,
    listAll,
    fields,
    filters: compileFilters(request.filters),
    fuzzy,
    proximity: proximity && proximity.terms.length >= 2 ? proximity : undefined,
    leaves,
    rank: rankFields(weights, kind),
    showInternal: kind === 'tool' && showsInternal(request, fields),
  };
}

/** @param known the query itself is known to match (only the rest is checked) */
function matches(entry: IndexEntry, p: Prepared, known: boolean): boolean {
  if (!known && !evaluate(p.ast, entry.doc, p.fuzzy)) return false;
  for (const [field, ast] of p.fields) if (!evaluate(ast, fieldDoc(entry, field), p.fuzzy)) return false;
  if (p.proximity && !proximityMatches(entry.doc, p.proximity.terms, p.proximity.distance)) return false;
  if (p.filters && !p.filters((key) => lookupField(entry, key))) return false;
  return true;
}

interface Hit {
  entry: IndexEntry;
  score: number;
}

function tieBreak(a: IndexEntry, b: IndexEntry): number {
  return (
    SOURCE_ORDER[a.source] - SOURCE_ORDER[b.source] ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) ||
    a.extensionRank - b.extensionRank ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

function comparator(sort: SearchSort): (a: Hit, b: Hit) => number {
  if (sort === 'name') {
    return (a, b) =>
      (a.entry.nameLower < b.entry.nameLower ? -1 : a.entry.nameLower > b.entry.nameLower ? 1 : 0) ||
      tieBreak(a.entry, b.entry);
  }
  if (sort === 'date') {
    return (a, b) => {
      const da = a.entry.date;
      const db = b.entry.date;
      if (da !== db) {
        if (da === undefined) return 1;
        if (db === undefined) return -1;
        return db - da;
      }
      return tieBreak(a.entry, b.entry);
    };
  }
  return (a, b) => b.score - a.score || tieBreak(a.entry, b.entry);
}

/**
 * The first `count` hits in order, as `hits.sort(compare).slice(0, count)` gives them (the order
 * is total: ties end on the path), without sorting all of a broad query's hits: a heap of the best
 * `count` so far, sorted at the end.
 */
function firstOf(hits: Hit[], count: number, compare: (a: Hit, b: Hit) => number): Hit[] {
  if (count <= 0) return [];
  if (hits.length <= count * 4) return hits.sort(compare).slice(0, count);
  // A max-heap (worst of the kept hits on top) of at most `count` hits.
  const heap: Hit[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compare(heap[i]!, heap[parent]!) <= 0) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < heap.length && compare(heap[left]!, heap[worst]!) > 0) worst = left;
      if (right < heap.length && compare(heap[right]!, heap[worst]!) > 0) worst = right;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  };
  for (const hit of hits) {
    if (heap.length < count) {
      heap.push(hit);
      up(heap.length - 1);
    } else if (compare(hit, heap[0]!) < 0) {
      heap[0] = hit;
      down(0);
    }
  }
  return heap.sort(compare);
}

function selectSpaces(context: ItemContext, space: SearchSpace): Space[] {
  const { spaces } = context;
  switch (space) {
    case 'project':
      return spaces.project ? [spaces.project] : [];
    case 'user':
      return [spaces.user];
    case 'system':
      return [...spaces.system];
    case 'registry':
      return [];
    default:
      return spaces.ordered();
  }
}

function annotate(result: SearchResult, entry: IndexEntry, roots: RootSnapshot[]): void {
  // Two files of one id in one space (noop.py beside noop.js): execute and load refuse the id,
  // so search lists each with that error (issue 11, item 10a; resolve.ts).
  const own = roots.map((root) => root.lookup(entry.id)).find((group) => group.includes(entry));
  if (own && own.length > 1) {
    const files = own.map((e) => e.path);
    const { message } = ambiguousItemError(entry.kind, entry.id, files, entry.source);
    result.error = result.error ? `${message}\n${result.error}` : message;
  }
  const same: IndexEntry[] = [];
  for (const root of roots) same.push(...root.lookup(entry.id));
  if (same.length < 2) return;
  if (same[0] === entry) result.shadows = same.slice(1).map((other) => ({ space: other.source }));
  else result.shadowed_by = same[0]!.source;
}

function inputsOf(entry: IndexEntry): string[] | undefined {
  const inputs = entry.metadata.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) return undefined;
  const names = inputs.filter((name): name is string => typeof name === 'string');
  return names.length ? names : undefined;
}

/** The declared version as written (a YAML number such as 1.0 is shown as a string). */
function versionOf(entry: IndexEntry): string | undefined {
  const { version } = entry.metadata;
  if (typeof version === 'string') return version || undefined;
  return typeof version === 'number' ? String(version) : undefined;
}

function toResult(hit: Hit, roots: RootSnapshot[]): SearchResult {
  const { entry } = hit;
  const inputs = entry.kind === 'directive' ? inputsOf(entry) : undefined;
  const version = versionOf(entry);
  const result: SearchResult = {
    id: entry.id,
    ref: entry.ref,
    type: entry.kind,
    name: entry.name,
    ...(entry.title && entry.title !== entry.name ? { title: entry.title } : {}),
    description: entry.description,
    category: entry.category,
    source: entry.source,
    path: entry.path,
    ...(version !== undefined ? { version } : {}),
    score: hit.score,
    signed: entry.signed,
    ...(entry.parameters !== undefined ? { parameters: { ...entry.parameters } } : {}),
    ...(inputs ? { inputs } : {}),
    ...(entry.internal !== undefined ? { internal: entry.internal } : {}),
    ...(entry.error !== undefined ? { error: entry.error } : {}),
  };
  annotate(result, entry, roots);
  return result;
}

/**
 * Searches the items of the scope's kind. Directive and knowledge metadata come from the search
 * readers registered with the executor (without one, an item's name is its file stem); tool
 * metadata is read by the executor's static parsers. Readers must be pure functions of the file text: entries are cached per
 * executor and re-read only when the file changes.
 */
export async function searchItems(context: ItemContext, request: SearchRequest): Promise<SearchResponse> {
  if (!request || typeof request !== 'object') {
    throw invalid('search request must be an object', 'Pass at least {"scope": "tool"}');
  }
  const { kind, namespace } = parseScope(request.scope);
  const space = request.space ?? 'all';
  if (!SPACES.includes(space)) {
    throw invalid(`Invalid space '${String(space)}'`, `Use one of: ${SPACES.join(', ')}`);
  }
  const sort = request.sort_by ?? 'score';
  if (!SORTS.includes(sort)) {
    throw invalid(`Invalid sort_by '${String(sort)}'`, `Use one of: ${SORTS.join(', ')}`);
  }
  const limit = count(request.limit, 'limit', DEFAULT_LIMIT);
  const offset = count(request.offset, 'offset', 0);
  const config = await context.kinds.get(kind);
  const prepared = prepare(request, kind, config.searchFields);
  const reader = kind === 'tool' ? undefined : context.readers[kind]?.search;
  const index = searchIndexOf(context);
  await index.settle();
  const roots = index.refresh(kind, config, selectSpaces(context, space), namespace, reader);
  const hits: Hit[] = [];
  let hidden = 0;
  for (const root of roots) {
    const { entries, exact, slots } = root.candidates(prepared.ast, prepared.fuzzy);
    // A broad query ranks thousands of entries: read its terms' strengths from the postings (for a
    // few entries, looking into each is cheaper than walking a term's postings).
    const lookups =
      slots && entries.length >= POSTINGS_RANKING_FROM
        ? prepared.leaves.map((leaf) => root.strengths(leaf, prepared.rank, prepared.fuzzy))
        : [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (!matches(entry, prepared, exact)) continue;
      const score = rankScoreWith(
        entry,
        slots ? slots[i]! : -1,
        prepared.leaves,
        lookups,
        prepared.rank,
        prepared.fuzzy,
      );
      if (score <= 0) continue;
      if (entry.internal !== undefined && !prepared.showInternal) {
        hidden++;
        continue;
      }
      hits.push({ entry, score });
    }
  }
  const page = firstOf(hits, offset + limit, comparator(sort)).slice(offset);
  const response: SearchResponse = {
    status: 'success',
    results: page.map((hit) => toResult(hit, roots)),
    total: hits.length,
    query: prepared.query,
    scope: request.scope,
    space,
    limit,
    offset,
    search_type: 'keyword',
  };
  if (hidden > 0) {
    response.hidden = hidden;
    response.hint = `${hidden} more matching ${hidden === 1 ? 'tool is' : 'tools are'} not called directly (runtimes, primitives, extractors, libraries); include_internal: true (CLI --all) lists them.`;
  }
  return response;
}
