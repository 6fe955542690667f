/**
 * `search` (spec interfaces §2.1): keyword search over the items of one kind in the local
 * spaces, with the query language of query.ts, per-field sub-queries, metadata filters, fuzzy
 * and proximity matching, field-weighted scores, shadow annotations and pagination.
 * Registry providers are not consulted here (`registry` lists nothing, `all` = local).
 */
import { RyeError } from '@ryeos/lillux';
import type { ItemContext } from '../context.js';
import type { ItemKind } from '../refs.js';
import type { Space, SpaceName } from '../spaces.js';
import type { IndexEntry } from './entry.js';
import { fieldDoc, lookupField } from './entry.js';
import { compileFilters } from './filters.js';
import type { RootSnapshot } from './index-cache.js';
import { searchIndexOf } from './index-cache.js';
import { proximityMatches } from './match.js';
import type { QueryNode } from './query.js';
import { evaluate, parseQuery, queryTerms } from './query.js';
import { parseScope } from './scope.js';

export type SearchSpace = 'project' | 'user' | 'system' | 'local' | 'registry' | 'all';
export type SearchSort = 'score' | 'name' | 'date';

export interface SearchRequest {
  scope: string;
  query?: string;
  space?: SearchSpace;
  limit?: number;
  offset?: number;
  sort_by?: SearchSort;
  fields?: Record<string, string>;
  filters?: Record<string, unknown>;
  fuzzy?: { enabled?: boolean; max_distance?: number };
  proximity?: { enabled?: boolean; max_distance?: number };
}

export interface SearchResult {
  id: string;
  /** Canonical `kind:id`. */
  ref: string;
  type: ItemKind;
  name: string;
  title: string;
  description: string;
  category: string;
  preview: string;
  source: SpaceName;
  path: string;
  score: number;
  metadata: Record<string, unknown>;
  signed: boolean;
  integrity?: string;
  error?: string;
  shadows?: { space: string }[];
  shadowed_by?: string;
}

export interface SearchResponse {
  status: 'success';
  results: SearchResult[];
  total: number;
  query: string;
  scope: string;
  space: string;
  limit: number;
  offset: number;
  search_type: 'keyword';
}

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
  weights: [string, number][];
  weightSum: number;
}

function prepare(request: SearchRequest, searchFields: Record<string, number> | undefined): Prepared {
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
  return {
    query,
    ast,
    listAll,
    fields,
    filters: compileFilters(request.filters),
    fuzzy,
    proximity: proximity && proximity.terms.length >= 2 ? proximity : undefined,
    weights,
    weightSum: weights.reduce((sum, [, w]) => sum + w, 0),
  };
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** The normalised field-weight sum of spec §2.1, exactly. */
function scoreOf(entry: IndexEntry, p: Prepared): number {
  if (p.listAll && p.fields.length === 0) return 1;
  let num = 0;
  let den = p.weightSum;
  for (const [field, weight] of p.weights) {
    if (evaluate(p.ast, fieldDoc(entry, field), p.fuzzy)) num += weight;
  }
  for (const [field, ast] of p.fields) {
    const weight = p.weights.find(([f]) => f === field)?.[1] ?? 1;
    den += weight;
    if (evaluate(ast, fieldDoc(entry, field), p.fuzzy)) num += weight;
  }
  return den > 0 ? round4(Math.min(1, num / den)) : 0;
}

function matches(entry: IndexEntry, p: Prepared): boolean {
  if (!evaluate(p.ast, entry.doc, p.fuzzy)) return false;
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
  const same: IndexEntry[] = [];
  for (const root of roots) same.push(...root.lookup(entry.id));
  if (same.length < 2) return;
  if (same[0] === entry) result.shadows = same.slice(1).map((other) => ({ space: other.source }));
  else result.shadowed_by = same[0]!.source;
}

function toResult(hit: Hit, roots: RootSnapshot[]): SearchResult {
  const { entry } = hit;
  const result: SearchResult = {
    id: entry.id,
    ref: entry.ref,
    type: entry.kind,
    name: entry.name,
    title: entry.title,
    description: entry.description,
    category: entry.category,
    preview: entry.preview,
    source: entry.source,
    path: entry.path,
    score: hit.score,
    metadata: structuredClone(entry.metadata),
    signed: entry.signed,
  };
  if (entry.integrity !== undefined) result.integrity = entry.integrity;
  if (entry.error !== undefined) result.error = entry.error;
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
  const prepared = prepare(request, config.searchFields);
  const reader = kind === 'tool' ? undefined : context.readers[kind]?.search;
  const roots = searchIndexOf(context).refresh(kind, config, selectSpaces(context, space), namespace, reader);
  const hits: Hit[] = [];
  for (const root of roots) {
    for (const entry of root.entries) {
      if (matches(entry, prepared)) hits.push({ entry, score: scoreOf(entry, prepared) });
    }
  }
  hits.sort(comparator(sort));
  return {
    status: 'success',
    results: hits.slice(offset, offset + limit).map((hit) => toResult(hit, roots)),
    total: hits.length,
    query: prepared.query,
    scope: request.scope,
    space,
    limit,
    offset,
    search_type: 'keyword',
  };
}
