/**
 * `${…}` interpolation and `when` conditions of a graph, through the same grammar as hooks (the
 * threads package's evaluator): only the spellings graphs also accept (`neq`, `operator`) are
 * normalised here.
 */
import { interpolate, matches } from '@ryeos/threads';

/** What `${…}` and conditions read: state, inputs, the last result, the foreach variable, builtins. */
export interface ExpressionScope {
  state: Record<string, unknown>;
  inputs: Record<string, unknown>;
  result?: unknown;
  /** The foreach variable, under its `as` name. */
  item?: { name: string; value: unknown };
}

function documentOf(scope: ExpressionScope, now: Date): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    state: scope.state,
    inputs: scope.inputs,
    result: scope.result ?? null,
    _now: now.toISOString(),
    _timestamp: now.getTime(),
  };
  if (scope.item) doc[scope.item.name] = scope.item.value;
  return doc;
}

/** Every string inside `value` filled from the scope; a whole `${x}` keeps x's type. */
export function fill(value: unknown, scope: ExpressionScope, now = new Date()): unknown {
  return interpolate(value, documentOf(scope, now));
}

/** Every string inside `value` filled from a document of the caller's own shape (a hook's event). */
export function fillFrom(value: unknown, doc: Record<string, unknown>): unknown {
  return interpolate(value, { ...doc, _now: new Date().toISOString(), _timestamp: Date.now() });
}

function normalised(condition: unknown): unknown {
  if (Array.isArray(condition)) return condition.map(normalised);
  if (condition === null || typeof condition !== 'object') return condition;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(condition)) {
    if (key === 'any' || key === 'all' || key === 'not') out[key] = normalised(value);
    else if (key === 'operator') out.op ??= value;
    else out[key] = value;
  }
  if (out.op === 'neq') out.op = 'ne';
  return out;
}

/** Whether a condition holds for a document of the caller's own shape (a hook's event). */
export function conditionHolds(condition: unknown, doc: Record<string, unknown>): boolean {
  return matches(normalised(condition), doc);
}

/** Whether a `when` holds; a condition that cannot be read is false, never an exception. */
export function holds(condition: unknown, scope: ExpressionScope): boolean {
  return matches(normalised(condition), documentOf(scope, new Date()));
}
