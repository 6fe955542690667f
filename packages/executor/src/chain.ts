/**
 * Builds and validates the executor chain tool → runtime(s) → primitive (spec items §4.1–§4.2).
 * Every element is resolved (space-scoped), read, verified and its metadata extracted; nothing runs.
 */
import { dirname } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { ItemContext } from './context.js';
import { readItemText } from './item-text.js';
import type { KindConfig } from './kinds.js';
import type { ToolMetadata } from './metadata.js';
import { extractToolMetadata } from './metadata.js';
import type { ResolvedItem } from './resolve.js';
import { resolveItem } from './resolve.js';
import { SPACE_PRECEDENCE } from './spaces.js';
import { rememberVerified } from './verified-memo.js';
import { verifyWithConfig } from './verified-read.js';
import type { ItemVerification } from './verify.js';

export const MAX_CHAIN_DEPTH = 10;
export const PRIMITIVES = ['rye/core/primitives/subprocess', 'rye/core/primitives/http_client'] as const;
export type PrimitiveId = (typeof PRIMITIVES)[number];
/** The v2 seed's primitive name, rewritten to subprocess (DECISIONS 14). */
const PRIMITIVE_ALIASES: Record<string, PrimitiveId> = {
  'rye/core/primitives/execute': 'rye/core/primitives/subprocess',
};

export interface ChainElement {
  id: string;
  path: string;
  dir: string;
  extension: string;
  space: ResolvedItem['space'];
  shadowed: ResolvedItem['shadowed'];
  searched: string[];
  metadata: ToolMetadata;
  verification: ItemVerification;
  /** The exact text that was verified: what runs is this, never a second read of `path`. */
  text: string;
}

/** Building a chain needs only the item context. */
export type ChainContext = ItemContext;

async function loadElement(
  item: ResolvedItem,
  tools: KindConfig,
  context: ChainContext,
): Promise<ChainElement> {
  const { text, metadata, verification } = rememberVerified(
    context,
    `element\0${item.path}\0${item.space.label}\0${item.id}`,
    item.path,
    tools,
    () => {
      const text = readItemText(item.path);
      const parser = tools.parsers[item.extension];
      let metadata: ToolMetadata | undefined;
      let parseError: unknown;
      try {
        if (!parser)
          throw new RyeError('CONFIG', `No parser configured for '${item.extension}' tools (${item.path})`);
        metadata = extractToolMetadata(text, item.path, parser, context.cache);
      } catch (error) {
        parseError = error;
      }
      // Integrity comes first: an unsigned or tampered file reports that, not its syntax.
      const verification = verifyWithConfig(context, tools, item, text, {
        declared: { category: metadata?.category },
      });
      if (!metadata) throw parseError;
      return { text, metadata, verification };
    },
  );
  return {
    id: item.id,
    path: item.path,
    dir: dirname(item.path),
    extension: item.extension,
    space: item.space,
    shadowed: item.shadowed,
    searched: item.searched,
    metadata,
    verification,
    text,
  };
}

/**
 * Builds the chain for a tool id into `chain` (a caller-owned array, so on a failure the caller
 * still holds the partial chain and the error keeps its own type, e.g. an `IntegrityError`'s
 * outcome).
 */
export async function buildChain(
  rootId: string,
  context: ChainContext,
  chain: ChainElement[] = [],
): Promise<ChainElement[]> {
  const visited = new Set<string>();
  const tools = await context.kinds.get('tool');
  let currentId = rootId;
  let from = 'project' as ResolvedItem['space']['name'];
  for (;;) {
    if (chain.length >= MAX_CHAIN_DEPTH) {
      throw new RyeError(
        'CHAIN',
        `Chain too deep (max ${MAX_CHAIN_DEPTH}): ${rootId}. Possible circular dependency or excessive nesting.`,
      );
    }
    if (Object.hasOwn(PRIMITIVE_ALIASES, currentId)) currentId = PRIMITIVE_ALIASES[currentId]!;
    if (visited.has(currentId)) {
      throw new RyeError('CHAIN', `Circular dependency detected: ${currentId}`, {
        hint: `Break the cycle in the executor_id links: ${[...visited, currentId].join(' -> ')}`,
      });
    }
    visited.add(currentId);
    const item = await resolveItem(context.spaces, 'tool', currentId, tools.extensions, {
      from,
      collectShadowed: true,
    });
    if (!item) {
      throw chain.length === 0
        ? new RyeError('NOT_FOUND', `Tool not found: ${rootId}`, {
            hint: 'Check the id, or search the tools for it.',
            fix: { action: 'search', item_type: 'tool' },
          })
        : new RyeError('CHAIN', `Executor not found: ${currentId}`, {
            hint: `'${chain.at(-1)?.id}' names executor '${currentId}', which no ${from === 'system' ? 'system' : `${from} or lower`} space holds.`,
          });
    }
    const element = await loadElement(item, tools, context);
    chain.push(element);
    const next = element.metadata.executorId;
    if (next === null || next === undefined || next === '') break;
    currentId = next;
    from = element.space.name;
  }
  const terminal = chain.at(-1)!;
  if (!(PRIMITIVES as readonly string[]).includes(terminal.id)) throw missingExecutor(chain);
  return chain;
}

/**
 * The chain stopped at an element that names no executor: the error names what is missing (a
 * runtime for a tool, a primitive for a runtime), not the element as if it were a primitive.
 */
function missingExecutor(chain: ChainElement[]): RyeError {
  const terminal = chain.at(-1)!;
  if (chain.length === 1) {
    return new RyeError('CHAIN', `Tool '${terminal.id}' names no executor: no runtime is set to run it`, {
      hint: `Set __executor_id__ (executor_id in YAML) of '${terminal.id}' to a runtime, e.g. rye/core/runtimes/python/script, then re-sign it.`,
    });
  }
  return new RyeError(
    'CHAIN',
    `'${terminal.id}' names no executor: the chain ${chain.map((el) => el.id).join(' -> ')} ends before a primitive`,
    { hint: `Set executor_id of '${terminal.id}' to ${PRIMITIVES.join(' or ')}, then re-sign it.` },
  );
}

function compareSemver(a: string, b: string): number | undefined {
  const parse = (v: string) => /^(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1).map(Number);
  const [x, y] = [parse(a), parse(b)];
  if (!x || !y) return undefined;
  for (let i = 0; i < 3; i++) if (x[i]! !== y[i]!) return x[i]! - y[i]!;
  return 0;
}

/** Checks every adjacent pair (space, I/O, version); returns the validated pairs or throws. */
export function validateChain(chain: ChainElement[]): { pairs: string[]; warnings: string[] } {
  const issues: string[] = [];
  const warnings: string[] = [];
  const pairs: string[] = [];
  for (let i = 0; i < chain.length - 1; i++) {
    const child = chain[i]!;
    const parent = chain[i + 1]!;
    const [cs, ps] = [child.space.name, parent.space.name];
    if (SPACE_PRECEDENCE[cs] < SPACE_PRECEDENCE[ps]) {
      issues.push(
        `Tool '${child.id}' from ${cs} space cannot depend on '${parent.id}' from ${ps} space. Lower precedence spaces cannot depend on higher precedence spaces.`,
      );
      if (cs === 'system') {
        issues.push(
          `Invalid chain: system tool '${child.id}' cannot delegate to mutable ${ps} tool '${parent.id}'`,
        );
      }
    }
    const outputs = child.metadata.outputs;
    const inputs = parent.metadata.inputs;
    if (outputs && inputs) {
      const missing = inputs.filter((input) => !outputs.includes(input));
      if (missing.length) {
        issues.push(
          `I/O mismatch: '${parent.id}' requires inputs [${missing.join(', ')}] not provided by '${child.id}' (outputs: [${outputs.join(', ')}])`,
        );
      }
    }
    const constraint = parent.metadata.childConstraints?.[child.id];
    if (constraint) {
      const version = child.metadata.version;
      if (!version) warnings.push(`'${child.id}' declares no version; '${parent.id}' constrains it`);
      else {
        if (constraint.min_version && (compareSemver(version, constraint.min_version) ?? 0) < 0) {
          issues.push(
            `Version mismatch: '${child.id}' ${version} is below ${constraint.min_version} required by '${parent.id}'`,
          );
        }
        if (constraint.max_version && (compareSemver(version, constraint.max_version) ?? 0) > 0) {
          issues.push(
            `Version mismatch: '${child.id}' ${version} is above ${constraint.max_version} allowed by '${parent.id}'`,
          );
        }
      }
    }
    pairs.push(`${child.id} -> ${parent.id}`);
  }
  if (issues.length) {
    throw new RyeError('CHAIN', `Chain validation failed: ${issues.join('; ')}`, {
      hint: 'Use runtimes from the same or a lower-precedence space than the tool (system tools use system runtimes).',
    });
  }
  return { pairs, warnings };
}
