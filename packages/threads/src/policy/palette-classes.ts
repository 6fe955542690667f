/**
 * Which palette tools a thread's capabilities call for (spec threads §7.2, first paragraph): the
 * primaries granted and the item types each may act on, and the tool patterns whose tools are
 * offered as their own API tools. This only offers; `checkPermission` still judges every call.
 */
import type { SignableKind } from '@ryeos/executor';
import { PRIMARIES, PRIMARY_TYPES, type Primary } from './capabilities.js';
import { globCovers, globIntersects } from './fnmatch.js';

/** The item types a primary may act on: a subset, or every type it knows. */
export type TypeGrant = ReadonlySet<SignableKind> | 'all';

export interface CapabilityClasses {
  /** Granted primaries in palette order (execute, search, load, sign). */
  primaries: Map<Primary, TypeGrant>;
  /**
   * Tool-id patterns from execute-tool capabilities (`rye.execute.tool.rye.file-system.*` →
   * `rye/file-system/*`; bare `*` = every tool), without repeats, most specific first.
   */
  executeToolPatterns: string[];
  /** Capabilities that name no primary this runner offers (e.g. `rye.fetch.*`, `rye.execute.tool`). */
  unclassified: string[];
}

/** Spec §7.2: a pattern without `*` (one exact tool) = 1000, else its segment count. */
export function toolPatternSpecificity(pattern: string): number {
  if (!pattern.includes('*')) return 1000;
  return pattern.replace(/[/*]+$/, '').split('/').length;
}

interface Grant {
  primary: Primary;
  type: SignableKind;
}

/**
 * One capability by its longest literal prefix: `rye.<primary>.<type>.<rest>` grants that type
 * (for execute-tool, `rest` with `.` → `/` is a tool pattern); a search capability may also stop at
 * the type (`rye.search.tool`). Returns undefined when no such prefix applies.
 */
function byPrefix(cap: string): { grants: Grant[]; toolPattern?: string } | undefined {
  for (const primary of PRIMARIES) {
    for (const type of PRIMARY_TYPES[primary]) {
      const base = `rye.${primary}.${type}`;
      if (primary === 'search' && (cap === base || cap === `${base}.`))
        return { grants: [{ primary, type }] };
      if (!cap.startsWith(`${base}.`) || cap.length === base.length + 1) continue;
      const rest = cap.slice(base.length + 1);
      const grants = [{ primary, type }];
      return primary === 'execute' && type === 'tool'
        ? { grants, toolPattern: rest.replaceAll('.', '/') }
        : { grants };
    }
  }
  return undefined;
}

/**
 * Any other capability (`rye.search.*`, `rye.execute.*`, `rye.*`, `rye.l?ad.*`…): it grants each
 * (primary, type) whose permission names it can match — a bare primary thus grants every type —
 * and every tool when it covers all of `rye.execute.tool.*`.
 */
function byPattern(cap: string): { grants: Grant[]; toolPattern?: string } {
  const grants: Grant[] = [];
  for (const primary of PRIMARIES) {
    for (const type of PRIMARY_TYPES[primary]) {
      const base = `rye.${primary}.${type}`;
      const reachable =
        primary === 'search'
          ? globIntersects(cap, base) || globIntersects(cap, `${base}.*`)
          : globIntersects(cap, `${base}.?*`);
      if (reachable) grants.push({ primary, type });
    }
  }
  return globCovers(cap, 'rye.execute.tool.*') ? { grants, toolPattern: '*' } : { grants };
}

export function classifyCapabilities(caps: readonly string[]): CapabilityClasses {
  const types = new Map<Primary, Set<SignableKind>>();
  const patterns: string[] = [];
  const unclassified: string[] = [];
  for (const cap of caps) {
    const { grants, toolPattern } = byPrefix(cap) ?? byPattern(cap);
    if (!grants.length) {
      unclassified.push(cap);
      continue;
    }
    for (const { primary, type } of grants) {
      const set = types.get(primary) ?? new Set<SignableKind>();
      set.add(type);
      types.set(primary, set);
    }
    if (toolPattern !== undefined && !patterns.includes(toolPattern)) patterns.push(toolPattern);
  }
  const primaries = new Map<Primary, TypeGrant>();
  for (const primary of PRIMARIES) {
    const set = types.get(primary);
    if (!set) continue;
    primaries.set(primary, PRIMARY_TYPES[primary].every((t) => set.has(t)) ? 'all' : set);
  }
  // Array.prototype.sort is stable: equally specific patterns keep capability order.
  const executeToolPatterns = patterns.sort((a, b) => toolPatternSpecificity(b) - toolPatternSpecificity(a));
  return { primaries, executeToolPatterns, unclassified };
}
