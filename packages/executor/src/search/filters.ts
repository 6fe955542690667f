/**
 * Metadata filters (spec interfaces §2.1): the value comes from the item, else its metadata
 * (missing → no match). A list filter means intersection / membership; a string `!x` negates;
 * `>=v <=v >v <v` compare 3-part numeric versions; anything else is case-insensitive equality
 * (membership for list values). `date_from` / `date_to` compare `created_at`; undated items pass.
 */
import { RyeError } from '@ryeos/lillux';

/** Reads one field of an item (top-level first, then metadata); undefined when absent. */
export type FieldLookup = (key: string) => unknown;

const SCALAR = new Set(['string', 'number', 'boolean']);

/** Equality, case-insensitive for strings; `1` equals `"1"`, `true` equals `"true"`. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!SCALAR.has(typeof a) || !SCALAR.has(typeof b)) return false;
  return String(a).toLowerCase() === String(b).toLowerCase();
}

function contains(list: unknown[], value: unknown): boolean {
  return list.some((item) => same(item, value));
}

/** -1 / 0 / 1; unparsable versions compare equal (as upstream). */
export function compareVersions(a: unknown, b: unknown): number {
  const parse = (v: unknown): number[] | undefined => {
    const parts = String(v).trim().split('.');
    if (!parts.every((p) => /^[+-]?\d+$/.test(p.trim()))) return undefined;
    const nums = parts.map((p) => Number.parseInt(p, 10));
    while (nums.length < 3) nums.push(0);
    return nums;
  };
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return 0;
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i]! < pb[i]!) return -1;
    if (pa[i]! > pb[i]!) return 1;
  }
  return 0;
}

function parseDate(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const time = typeof value === 'number' ? value : Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

function matchDate(created: unknown, bound: unknown, direction: 'from' | 'to'): boolean {
  if (created === undefined || created === null || created === '') return true;
  const item = parseDate(created);
  const limit = parseDate(bound);
  if (item === undefined || limit === undefined) return true;
  return direction === 'from' ? item >= limit : item <= limit;
}

function matchOne(lookup: FieldLookup, key: string, expected: unknown): boolean {
  if (key === 'date_from' || key === 'date_to') {
    return matchDate(lookup('created_at'), expected, key === 'date_from' ? 'from' : 'to');
  }
  const actual = lookup(key);
  if (actual === undefined || actual === null) return false;
  if (Array.isArray(expected)) {
    if (Array.isArray(actual)) return expected.some((value) => contains(actual, value));
    return contains(expected, actual);
  }
  if (typeof expected === 'string') {
    if (expected.startsWith('!')) {
      const target = expected.slice(1);
      return Array.isArray(actual) ? !contains(actual, target) : !same(actual, target);
    }
    for (const op of ['>=', '<=', '>', '<'] as const) {
      if (!expected.startsWith(op)) continue;
      const cmp = compareVersions(actual, expected.slice(op.length));
      if (op === '>=') return cmp >= 0;
      if (op === '<=') return cmp <= 0;
      if (op === '>') return cmp > 0;
      return cmp < 0;
    }
    return Array.isArray(actual) ? contains(actual, expected) : same(actual, expected);
  }
  return Array.isArray(actual) ? contains(actual, expected) : same(actual, expected);
}

export type CompiledFilters = (lookup: FieldLookup) => boolean;

/** Validates the filters object and returns a matcher. */
export function compileFilters(filters: unknown): CompiledFilters | undefined {
  if (filters === undefined || filters === null) return undefined;
  if (typeof filters !== 'object' || Array.isArray(filters)) {
    throw new RyeError('VALIDATION', 'filters must be an object of {key: value}', {
      hint: 'For example {"category": "rye/core", "version": ">=1.0.0", "tags": ["web"]}',
    });
  }
  const entries = Object.entries(filters as Record<string, unknown>);
  if (entries.length === 0) return undefined;
  return (lookup) => entries.every(([key, value]) => matchOne(lookup, key, value));
}
