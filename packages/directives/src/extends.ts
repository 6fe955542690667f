/**
 * `extends` chains and context composition (threads spec §6): walk leaf → root with cycle
 * detection, then compose `<context>` knowledge root-first, de-duplicated, minus `suppress`.
 */
import type { Executor } from '@ryeos/executor';
import { isRyeError, RyeError } from '@ryeos/lillux';
import type { ParsedDirective } from './directive.js';
import type { Loaded } from './load.js';
import { loadDirective, loadKnowledge } from './load.js';

export const MAX_EXTENDS_DEPTH = 16;

/** The directive and its ancestors, root first. */
export async function resolveExtendsChain(
  executor: Executor,
  leaf: Loaded<ParsedDirective>,
): Promise<Loaded<ParsedDirective>[]> {
  const chain: Loaded<ParsedDirective>[] = [leaf];
  const seen = [leaf.id];
  let current = leaf;
  while (current.parsed.extends) {
    const parentId = current.parsed.extends;
    if (seen.includes(parentId)) {
      throw new RyeError(
        'VALIDATION',
        `Circular extends chain: ${parentId} (chain: ${[...seen, parentId].join(' → ')})`,
        {
          hint: `Remove the extends attribute that points back to '${parentId}'.`,
        },
      );
    }
    if (chain.length >= MAX_EXTENDS_DEPTH) {
      throw new RyeError(
        'VALIDATION',
        `Extends chain too deep (max ${MAX_EXTENDS_DEPTH}): ${seen.join(' → ')}`,
      );
    }
    try {
      current = await loadDirective(executor, parentId);
    } catch (error) {
      if (isRyeError(error) && error.code === 'NOT_FOUND') {
        throw new RyeError(
          'NOT_FOUND',
          `Directive '${seen.at(-1)}' extends '${parentId}', which was not found`,
          {
            hint: 'Fix the extends attribute or add the parent directive.',
          },
        );
      }
      throw error;
    }
    seen.push(current.id);
    chain.push(current);
  }
  return chain.reverse();
}

export interface ComposedContext {
  /** Knowledge ids per position, root→leaf, de-duplicated, suppressions removed. */
  ids: { system: string[]; before: string[]; after: string[] };
  suppressed: string[];
  /** Bodies joined by a blank line. */
  system: string;
  before: string;
  after: string;
  warnings: string[];
}

/**
 * Composes the context of a chain (root first). Integrity failures abort; other failures to
 * load a knowledge item are warnings and the item is skipped.
 */
export async function composeContext(
  executor: Executor,
  chain: Loaded<ParsedDirective>[],
): Promise<ComposedContext> {
  const ids = { system: [] as string[], before: [] as string[], after: [] as string[] };
  const suppressed = new Set<string>();
  for (const { parsed } of chain) {
    for (const id of parsed.context?.suppress ?? []) suppressed.add(id);
  }
  for (const { parsed } of chain) {
    for (const position of ['system', 'before', 'after'] as const) {
      for (const id of parsed.context?.[position] ?? []) {
        if (!ids[position].includes(id) && !suppressed.has(id)) ids[position].push(id);
      }
    }
  }
  const warnings: string[] = [];
  const bodies = async (list: string[]) => {
    const out: string[] = [];
    for (const id of list) {
      try {
        out.push((await loadKnowledge(executor, id)).parsed.body);
      } catch (error) {
        if (isRyeError(error) && error.code === 'INTEGRITY') throw error;
        warnings.push(`Context knowledge '${id}' skipped: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    return out.filter(Boolean).join('\n\n');
  };
  return {
    ids,
    suppressed: [...suppressed],
    system: await bodies(ids.system),
    before: await bodies(ids.before),
    after: await bodies(ids.after),
    warnings,
  };
}
