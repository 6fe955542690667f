/**
 * Capabilities (spec threads §4): where a thread's capability strings come from (the directive's
 * `<permissions>`, narrowed by the parent's), and the check made before every tool call.
 *
 * Grammar: `rye.<primary>.<item_type>.<item_id with / → .>`, globbed with Python fnmatch, so `*`
 * also crosses dots: `rye.execute.tool.rye.*` covers `rye/file-system/write`.
 */
import type { Capability } from '@ryeos/directives';
import type { ItemKind, SignableKind } from '@ryeos/executor';
import { ITEM_KINDS, kindPrefix, parseRef } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { fnmatch, globCovers, hasWildcard } from './fnmatch.js';
import { pyList } from './py-repr.js';

export const PRIMARIES = ['execute', 'search', 'load', 'sign'] as const;
export type Primary = (typeof PRIMARIES)[number];

/** The item types each primary acts on (sign also signs config files). */
export const PRIMARY_TYPES: Readonly<Record<Primary, readonly SignableKind[]>> = {
  execute: ITEM_KINDS,
  search: ITEM_KINDS,
  load: ITEM_KINDS,
  sign: [...ITEM_KINDS, 'config'],
};

/** Tools the runner itself provides; hooks and the runner call them, so no capability gates them. */
export const INTERNAL_TOOL_PREFIX = 'rye/agent/threads/internal/';

/** `/` → `.`: ids are slash paths, capabilities are dotted. */
export function dotted(id: string): string {
  return id.replaceAll('/', '.');
}

/**
 * The capability strings a directive declares: the parser has already turned `<permissions>` into
 * `{tag:'cap', content}` entries (`<permissions>*</permissions>` → `rye.*`); ids written with
 * slashes are normalised to dots.
 */
export function capabilitiesFromDirective(permissions: readonly Capability[] | undefined): string[] {
  return (permissions ?? [])
    .filter((p) => p.tag === 'cap')
    .map((p) => dotted(p.content.trim()))
    .filter((c) => c.length > 0);
}

/**
 * The permissions an extends chain grants (given root first, leaf last): the leaf's own when it
 * declares any, else those of the root-most ancestor that declares any (spec threads §4).
 */
export function permissionsFromChain(
  chainRootFirst: ReadonlyArray<{ permissions: readonly Capability[] }>,
): readonly Capability[] {
  const leaf = chainRootFirst.at(-1);
  if (!leaf) return [];
  if (leaf.permissions.length) return leaf.permissions;
  return chainRootFirst.slice(0, -1).find((d) => d.permissions.length)?.permissions ?? [];
}

/**
 * Narrows a child's capabilities by its parent's (spec threads §4). `parent` is `undefined` only
 * for a root thread; a parent that holds no capabilities passes `[]` and its child gets none.
 *
 * Both present: for each child cap `c`, the first parent cap `p` with `fnmatch(c, p)` keeps `c`;
 * otherwise the first `p` with `fnmatch(p, c)` (the child asked for more) keeps `p`; otherwise `c`
 * is dropped. Only child → the child's; only parent → inherited; neither → `[]` (deny all).
 *
 * One guard on the first rule: `fnmatch(c, p)` treats `c` as a name, so a parent `rye.x.a?` would
 * "match" a child `rye.x.a*` and keep a capability broader than the parent's. `c` is kept only when
 * `p` really covers every name `c` matches; such a child falls through to the second rule.
 */
export function attenuate(
  child: readonly string[] | undefined,
  parent: readonly string[] | undefined,
): string[] {
  const childCaps = (child ?? []).map(dotted);
  if (parent === undefined) return childCaps;
  const parentCaps = parent.map(dotted);
  if (!childCaps.length) return parentCaps;
  if (!parentCaps.length) return [];
  const kept: string[] = [];
  for (const c of childCaps) {
    const within = parentCaps.find((p) => fnmatch(c, p) && globCovers(p, c));
    if (within !== undefined) {
      kept.push(c);
      continue;
    }
    const narrowed = parentCaps.find((p) => fnmatch(p, c));
    if (narrowed !== undefined) kept.push(narrowed);
  }
  return kept;
}

/**
 * The grants a child declared that it does not hold as written once attenuated: dropped because
 * its parent holds nothing that covers them, or narrowed to what the parent holds.
 */
export function attenuatedAway(child: readonly string[], kept: readonly string[]): string[] {
  const held = new Set(kept);
  return [...new Set(child.map(dotted))].filter((grant) => !held.has(grant));
}

/** What a tool call asks to do, in capability terms. `itemId` is empty for a search. */
export interface PermissionRequest {
  primary: Primary;
  itemType: string;
  itemId: string;
  /** For a search: the scope's namespace (`rye/core` for `tool.rye.core.*`), if any. */
  namespace?: string;
}

export interface PermissionDenial {
  error: string;
  denied_action: string;
  denied_item_type: string;
  denied_item_id: string;
}

export type PermissionResult = { allowed: true } | { allowed: false; denial: PermissionDenial };

function deny(request: PermissionRequest, error: string): PermissionResult {
  return {
    allowed: false,
    denial: {
      error,
      denied_action: request.primary,
      denied_item_type: request.itemType,
      denied_item_id: request.itemId,
    },
  };
}

/**
 * The check before every tool call (hooks are not checked). Internal runner tools always pass; with
 * no capabilities everything is denied; otherwise some capability must cover
 * `rye.<primary>.<type>.<dotted id>`. A search needs a capability matching `rye.search.<type>` or
 * `rye.search.<type>.` — or, for a scope with a namespace, `rye.search.<type>.<dotted ns>.`, so a
 * capability `rye.search.tool.rye.core.*` allows searching `tool.rye.core.*` (that search cannot
 * leave the namespace) but not all tools.
 *
 * An id holding wildcards (sign accepts `rye/*`) must be covered as a whole pattern: a capability
 * `rye.sign.tool.?` matches the name `rye.sign.tool.*` but must not allow signing every tool.
 */
export function checkPermission(caps: readonly string[], request: PermissionRequest): PermissionResult {
  const { primary, itemType, itemId } = request;
  if (
    primary === 'execute' &&
    itemType === 'tool' &&
    itemId.startsWith(INTERNAL_TOOL_PREFIX) &&
    !hasWildcard(itemId)
  )
    return { allowed: true };
  if (!caps.length) {
    return deny(
      request,
      `Permission denied: no capabilities declared. Cannot ${primary} ${itemType} '${itemId || itemType}'`,
    );
  }
  let required: string;
  let allowed: boolean;
  if (primary === 'search') {
    required = `rye.search.${itemType}`;
    const names = [required, `${required}.`];
    if (request.namespace) names.push(`${required}.${dotted(request.namespace)}.`);
    allowed = caps.some((cap) => names.some((name) => fnmatch(name, cap)));
  } else {
    required = `rye.${primary}.${itemType}.${dotted(itemId)}`;
    // Tools that glob ids (sign) read `[…]` differently from fnmatch (`^` negates there), so no
    // capability can be said to cover such an id.
    if (itemId.includes('['))
      return deny(
        request,
        `Permission denied: '${required}': an item id holding '[' cannot be checked against capabilities`,
      );
    allowed = hasWildcard(required)
      ? caps.some((cap) => globCovers(cap, required))
      : caps.some((cap) => fnmatch(required, cap));
  }
  if (allowed) return { allowed: true };
  return deny(request, `Permission denied: '${required}' not covered by capabilities ${pyList(caps)}`);
}

/** A palette entry as far as the check needs it (spec threads §7.2: `_item_id`, `_primary`). */
export interface PaletteToolRef {
  name: string;
  _item_id: string;
  _primary: Primary;
}

/** The search scope grammar of `@ryeos/executor` (`tool`, `tool.rye.core.*`, `rye.search.tool.*`). */
export interface SearchScope {
  itemType: ItemKind;
  /** Slash namespace without a trailing slash; undefined = the whole type. */
  namespace: string | undefined;
}

function scopeError(scope: string): RyeError {
  return new RyeError('VALIDATION', 'scope must specify an item_type (e.g., rye.search.directive.*)', {
    hint: `Got scope '${scope}'. Use directive, tool or knowledge, optionally with a namespace: tool.rye.core.* or rye.search.tool.rye.core.*`,
  });
}

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

/**
 * The item type (and namespace) a search scope names. This mirrors `parseScope` in
 * `@ryeos/executor` (not exported there) rule for rule, because the check must judge the search
 * that will actually run: shorthand `<type>[.<ns>][.*]` or capability form `rye.<x>.<type>[.<ns>][.*]`.
 */
export function parseSearchScope(raw: unknown): SearchScope {
  const scope = typeof raw === 'string' ? raw.trim() : '';
  if (!scope) throw scopeError(String(raw ?? ''));
  const [kind, specifics] = scope.startsWith('rye.')
    ? splitDots(scope.slice(4), 2).slice(1)
    : splitDots(scope, 1);
  if (!kind || !(ITEM_KINDS as readonly string[]).includes(kind)) throw scopeError(scope);
  let namespace: string | undefined;
  if (specifics !== undefined) {
    let rest = specifics;
    if (rest.endsWith('.*')) rest = rest.slice(0, -2);
    else if (rest.endsWith('*')) rest = rest.slice(0, -1);
    namespace = rest.replaceAll('.', '/').replace(/\/+$/, '').replace(/^\/+/, '') || undefined;
  }
  return { itemType: kind as ItemKind, namespace };
}

function argString(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

/**
 * `item_type` + `item_id` of a primary call: a canonical ref (`tool:x/y`) carries its own type
 * (DECISIONS 1); a plain id needs `item_type`, since the check cannot look the item up.
 */
function itemTarget(primary: Primary, args: Record<string, unknown>): PermissionRequest {
  const rawId = argString(args, 'item_id');
  if (!rawId)
    throw new RyeError('VALIDATION', `rye_${primary}: item_id is required.`, {
      hint: 'Pass a canonical ref such as "tool:rye/file-system/read", or item_type with a plain id.',
    });
  const itemType = argString(args, 'item_type');
  const prefix = kindPrefix(rawId);
  const ref = parseRef(rawId);
  if (itemType && prefix && itemType !== prefix) {
    throw new RyeError('VALIDATION', `item_type '${itemType}' contradicts the ref prefix '${prefix}:'`, {
      hint: 'Drop item_type, or make it match the prefix.',
    });
  }
  const type = prefix ?? itemType;
  if (!type)
    throw new RyeError(
      'VALIDATION',
      `rye_${primary}: item_type is required when item_id is not a canonical ref.`,
      {
        hint: `Pass item_type, or use a canonical ref such as "tool:${ref.id}".`,
      },
    );
  if (!(PRIMARY_TYPES[primary] as readonly string[]).includes(type))
    throw new RyeError(
      'VALIDATION',
      `rye_${primary}: item_type '${type}' is not one of ${PRIMARY_TYPES[primary].join(', ')}.`,
    );
  return { primary, itemType: type, itemId: ref.id };
}

/**
 * What a palette tool call asks for (spec threads §4 "Target"). The four primary tools name their
 * target in their arguments; any other palette tool IS its target: `tool` + its own `_item_id`,
 * whatever its arguments say (an `item_id` argument to `rye_file_system_read` is data for the tool,
 * never the thing checked — reading it let a model pass the check for one tool and run another).
 * Throws a VALIDATION `RyeError` for arguments no check can judge (no id, unknown type or scope).
 */
export function permissionTarget(args: Record<string, unknown>, entry: PaletteToolRef): PermissionRequest {
  const primary = entry._primary;
  const isPrimaryTool = entry._item_id === `rye/${primary}` && PRIMARIES.includes(primary);
  if (!isPrimaryTool) return { primary, itemType: 'tool', itemId: entry._item_id };
  if (primary === 'search') {
    const scope = parseSearchScope(args.scope);
    return {
      primary,
      itemType: scope.itemType,
      itemId: '',
      ...(scope.namespace ? { namespace: scope.namespace } : {}),
    };
  }
  return itemTarget(primary, args);
}
