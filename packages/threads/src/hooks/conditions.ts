/**
 * Hook conditions and error-classification matches (spec threads §5.4): one small grammar,
 * `{any:[…]}`, `{all:[…]}`, `{not:c}` or `{path, op='eq', value}`, evaluated against a context
 * document. Evaluation never throws: a condition it cannot read is false.
 *
 * `regex` runs on RE2 (re2js), whose matching time is linear in the input, so a hostile
 * `hooks.yaml` pattern such as `(a+)+$` cannot hang the runner; patterns RE2 does not support
 * (backreferences, lookaround) simply do not match. Inputs and patterns are also bounded.
 */
import type { RE2JS } from 're2js';
import { re2 } from '../re2.js';
import { isRecord } from '../records.js';

/** A condition as written in YAML or XML; `undefined`/`null`/`{}` always match. */
export type Condition = Readonly<Record<string, unknown>> | null | undefined;

/** Operators of `{path, op, value}`; anything else is false. */
export const CONDITION_OPS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'contains',
  'regex',
  'exists',
] as const;

/** Text longer than this is searched only in its first part (RE2 is linear; this bounds memory too). */
export const MAX_REGEX_INPUT = 1_000_000;
/** A longer pattern is treated as not matching. */
export const MAX_REGEX_PATTERN = 2_000;

/**
 * The value at a dot path: each segment is an own object key or a numeric array index. An
 * unresolvable path is `null` (never `undefined`, never an inherited property such as
 * `constructor`); the empty path is the whole document.
 */
export function resolvePath(doc: unknown, path: string): unknown {
  if (path === '') return doc ?? null;
  let current: unknown = doc;
  for (const segment of path.split('.')) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return null;
      current = current[Number(segment)];
    } else if (isRecord(current)) {
      if (!Object.hasOwn(current, segment)) return null;
      current = current[segment];
    } else return null;
    if (current === undefined || current === null) return null;
  }
  return current;
}

/** Structural equality of JSON-like values (the `eq`/`ne`/`in` comparison). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

/** A value as text for `contains`/`regex`: strings as they are, other values as JSON. */
export function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  return JSON.stringify(value) ?? '';
}

// Compiled patterns, bounded so a config cannot grow it without end.
const compiled = new Map<string, RE2JS | null>();
const MAX_CACHED = 256;

function compile(pattern: string): RE2JS | null {
  if (compiled.has(pattern)) return compiled.get(pattern)!;
  let re: RE2JS | null;
  try {
    re = pattern.length > MAX_REGEX_PATTERN ? null : re2().compile(pattern);
  } catch {
    re = null; // not RE2 syntax (e.g. a backreference): the condition is false
  }
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(pattern, re);
  return re;
}

/** Python `re.search` semantics (a match anywhere), in linear time. */
export function regexSearch(pattern: string, text: string): boolean {
  const re = compile(pattern);
  if (!re) return false;
  return re.matcher(text.length > MAX_REGEX_INPUT ? text.slice(0, MAX_REGEX_INPUT) : text).find();
}

function ordered(actual: unknown, expected: unknown): number | null {
  if (typeof actual === 'number' && typeof expected === 'number') return actual - expected;
  if (typeof actual === 'string' && typeof expected === 'string') {
    return actual < expected ? -1 : actual > expected ? 1 : 0;
  }
  return null; // mixed or null operands never compare
}

/** One operator; `actual` is already resolved (null when the path did not resolve). */
export function applyOp(op: string, actual: unknown, expected: unknown): boolean {
  switch (op) {
    case 'eq':
      return deepEqual(actual, expected ?? null);
    case 'ne':
      return !deepEqual(actual, expected ?? null);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const d = ordered(actual, expected);
      if (d === null || Number.isNaN(d)) return false;
      return op === 'gt' ? d > 0 : op === 'gte' ? d >= 0 : op === 'lt' ? d < 0 : d <= 0;
    }
    case 'in':
      if (Array.isArray(expected)) return expected.some((item) => deepEqual(actual, item));
      // Python's `x in "a,b"` on a string value (the only list-like an XML attribute can hold).
      return typeof expected === 'string' && typeof actual === 'string' && expected.includes(actual);
    case 'contains':
      if (actual === null || expected === null || expected === undefined) return false;
      return valueText(actual).includes(valueText(expected));
    case 'regex':
      if (actual === null || typeof expected !== 'string') return false;
      return regexSearch(expected, valueText(actual));
    case 'exists':
      return actual !== null;
    default:
      return false;
  }
}

/** Whether `condition` holds for `doc`. Empty conditions hold; malformed ones do not. */
export function matches(condition: Condition | unknown, doc: unknown): boolean {
  if (condition === undefined || condition === null) return true;
  if (!isRecord(condition)) return false;
  if (Object.keys(condition).length === 0) return true;
  if (Object.hasOwn(condition, 'any')) {
    const list = condition.any;
    return Array.isArray(list) && list.some((c) => matches(c, doc));
  }
  if (Object.hasOwn(condition, 'all')) {
    const list = condition.all;
    return Array.isArray(list) && list.every((c) => matches(c, doc));
  }
  if (Object.hasOwn(condition, 'not')) return !matches(condition.not, doc);
  const path = condition.path;
  if (typeof path !== 'string') return false;
  const op = condition.op ?? 'eq';
  if (typeof op !== 'string') return false;
  return applyOp(op, resolvePath(doc, path), condition.value);
}
