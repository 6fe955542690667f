/**
 * Search scopes (spec interfaces §2.1): shorthand `<kind>[.<ns.dotted>][.*]` or capability form
 * `rye.<primary>.<kind>[.<ns.dotted>][.*]`. Dots become `/`, a trailing `.*` / `*` is dropped,
 * and the namespace matches whole id segments (`rye/core` never matches `rye/core-x`).
 */
import { RyeError } from '@ryeos/lillux';
import type { ItemKind } from '../refs.js';
import { ITEM_KINDS } from '../refs.js';

/**
 * What a search's `scope` may be: a kind, the kind with a dotted namespace (`tool.rye.core.*`), or
 * the capability form (`rye.search.tool.rye.core.*`). A value from outside is checked by
 * `parseScope` (or `isSearchScope`) all the same: the type cannot say that a namespace is well formed.
 */
export type SearchScope =
  | ItemKind
  | `${ItemKind}.${string}`
  | `rye.${string}.${ItemKind}`
  | `rye.${string}.${ItemKind}.${string}`;

export interface ParsedScope {
  kind: ItemKind;
  /** Slash namespace without a trailing slash; undefined = no namespace filter. */
  namespace: string | undefined;
}

export const SCOPE_ERROR = 'scope must specify an item_type (e.g., rye.search.directive.*)';

function scopeError(scope: string): RyeError {
  return new RyeError('VALIDATION', SCOPE_ERROR, {
    hint: `Got scope '${scope}'. Use directive, tool or knowledge, optionally with a namespace: tool.rye.core.* or rye.search.tool.rye.core.*`,
  });
}

function namespaceOf(specifics: string | undefined): string | undefined {
  if (specifics === undefined) return undefined;
  let rest = specifics;
  if (rest.endsWith('.*')) rest = rest.slice(0, -2);
  else if (rest.endsWith('*')) rest = rest.slice(0, -1);
  const ns = rest.replaceAll('.', '/').replace(/\/+$/, '').replace(/^\/+/, '');
  return ns || undefined;
}

function isKind(value: string | undefined): value is ItemKind {
  return value !== undefined && (ITEM_KINDS as readonly string[]).includes(value);
}

/** Splits `s` at the first `count` dots (like Python's `str.split('.', count)`). */
function splitDots(s: string, count: number): string[] {
  const parts: string[] = [];
  let rest = s;
  while (parts.length < count) {
    const dot = rest.indexOf('.');
    if (dot === -1) break;
    parts.push(rest.slice(0, dot));
    rest = rest.slice(dot + 1);
  }
  parts.push(rest);
  return parts;
}

export function parseScope(raw: unknown): ParsedScope {
  const scope = typeof raw === 'string' ? raw.trim() : '';
  if (!scope) throw scopeError(String(raw ?? ''));
  if (scope.startsWith('rye.')) {
    const [, kind, specifics] = splitDots(scope.slice(4), 2);
    if (!isKind(kind)) throw scopeError(scope);
    return { kind, namespace: namespaceOf(specifics) };
  }
  const [kind, specifics] = splitDots(scope, 1);
  if (!isKind(kind)) throw scopeError(scope);
  return { kind, namespace: namespaceOf(specifics) };
}

/** Whole-segment namespace match on an item id. */
export function inNamespace(id: string, namespace: string | undefined): boolean {
  if (!namespace) return true;
  return id === namespace || (id.startsWith(namespace) && id.charCodeAt(namespace.length) === 47) /* / */;
}

/** True when a directory (relative to the type root, '' = root) can hold ids in the namespace. */
export function dirInNamespace(relDir: string, namespace: string | undefined): boolean {
  if (!namespace || relDir === '') return true;
  return inNamespace(relDir, namespace) || namespace.startsWith(`${relDir}/`);
}

/** True when `value` is a scope `parseScope` accepts. */
export function isSearchScope(value: unknown): value is SearchScope {
  try {
    parseScope(value);
    return true;
  } catch {
    return false;
  }
}
