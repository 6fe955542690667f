export type { SearchableFields, SearchReader } from './entry.js';
export { internalReason } from './entry.js';
export type { CompiledFilters, FieldLookup } from './filters.js';
export { compareVersions, compileFilters } from './filters.js';
export { levenshtein } from './match.js';
export type { QueryNode } from './query.js';
export { evaluate, parseQuery, queryTerms } from './query.js';
export type { ParsedScope, SearchScope } from './scope.js';
export { inNamespace, isSearchScope, parseScope, SCOPE_ERROR } from './scope.js';
export type {
  SearchRequest,
  SearchResponse,
  SearchResult,
  SearchSort,
  SearchSpace,
} from './search.js';
export { DEFAULT_FIELD_WEIGHTS, searchItems } from './search.js';
