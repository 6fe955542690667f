/**
 * The tool palette a thread's model sees (spec threads §7.2): the granted primaries as
 * `rye_execute|search|load|sign`, the tools its execute capabilities name (`rye_file_system_read`),
 * `rye_directive_return` when the directive declares outputs, and `rye_read_artifact` to read back
 * a result the guard shortened. Each entry keeps the item id and primary it dispatches to.
 */
import type { Executor, ToolMetadata } from '@ryeos/executor';
import {
  extractToolMetadata,
  findItem,
  internalReason,
  searchItems,
  toolParameterSchema,
} from '@ryeos/executor';
import { isRyeError } from '@ryeos/lillux';
import type { PrimaryName, PrimaryToolSpec } from '../host.js';
import { fnmatch } from '../policy/fnmatch.js';
import { classifyCapabilities, type TypeGrant } from '../policy/palette-classes.js';
import type { ToolDefinition } from '../provider/types.js';

export const DIRECTIVE_RETURN_NAME = 'rye_directive_return';
export const DIRECTIVE_RETURN_ID = 'rye/agent/threads/directive_return';
export const READ_ARTIFACT_NAME = 'rye_read_artifact';
export const READ_ARTIFACT_ID = 'rye/agent/threads/internal/read_artifact';
/** A thread's calls of the orchestrator tool are answered in-process, scoped (orchestration/scoped.ts). */
export const ORCHESTRATOR_ID = 'rye/agent/threads/orchestrator';
const PROVIDERS_PREFIX = 'rye/agent/providers/';

export type PaletteKind = 'primary' | 'tool' | 'directive_return' | 'internal';

export interface PaletteEntry extends ToolDefinition {
  kind: PaletteKind;
  /** The item the call runs (`rye/execute` for the primary, the tool id for a preloaded tool). */
  itemId: string;
  primary: PrimaryName;
  /** The tool declares `__parallel_safe__`: its calls may overlap instead of queueing in stream order. */
  parallelSafe?: boolean;
}

export interface Palette {
  entries: PaletteEntry[];
  byName: Map<string, PaletteEntry>;
  /** Tool patterns that matched nothing, and tools skipped (unverifiable, over budget). */
  warnings: string[];
}

/** `rye/file-system/read` → `rye_file_system_read` (provider names allow `[A-Za-z0-9_-]{1,64}`). */
export function apiNameOf(itemId: string): string {
  return itemId.replace(/[/-]/g, '_').replace(/[^A-Za-z0-9_]/g, '_');
}

function narrowed(spec: PrimaryToolSpec, types: TypeGrant): string {
  if (types === 'all') return spec.description;
  return `${spec.description}\n\nIn this thread you may ${spec.name} only: ${[...types].sort().join(', ')}.`;
}

/**
 * The folder of tool ids a pattern cannot leave: its whole literal segments before the first
 * wildcard (`acme/*` → `acme`, an exact id → itself, `*` or `ac*` → undefined, every tool). A
 * segment with a dot ends it too, since a search scope spells `/` as `.`.
 */
export function patternNamespace(pattern: string): string | undefined {
  const literal: string[] = [];
  for (const segment of pattern.split('/')) {
    if (!segment || /[*?[.]/.test(segment)) break;
    literal.push(segment);
  }
  return literal.length ? literal.join('/') : undefined;
}

/**
 * The tools a pattern may match, in name order: an exact id by that id, a pattern by a search of
 * its namespace only, so a fork reads what its capabilities reach rather than every tool of every space.
 */
async function listToolIds(executor: Executor, pattern: string): Promise<string[]> {
  if (!/[*?[]/.test(pattern)) return (await isListedTool(executor, pattern)) ? [pattern] : [];
  const namespace = patternNamespace(pattern);
  const scope = namespace ? (`tool.${namespace.replaceAll('/', '.')}` as const) : 'tool';
  const response = await searchItems(executor, { scope, query: '*', limit: 10_000, sort_by: 'name' });
  return response.results.map((r) => r.id).filter((id) => !id.startsWith(PROVIDERS_PREFIX));
}

/**
 * Whether a search would list this tool id: it exists, is not a provider definition, and can be
 * called on its own (runtimes, primitives and libraries are not offered). One whose metadata does
 * not parse is listed, and left out with its error where the palette reads it.
 */
async function isListedTool(executor: Executor, id: string): Promise<boolean> {
  if (id.startsWith(PROVIDERS_PREFIX)) return false;
  try {
    if (!(await findItem(executor, 'tool', id))) return false;
  } catch (error) {
    // Not an item id at all (an empty segment, say): nothing a search would list either.
    if (isRyeError(error) && error.code === 'VALIDATION') return false;
    throw error;
  }
  let metadata: ToolMetadata | undefined;
  try {
    metadata = await verifiedToolMetadata(executor, id);
  } catch {
    return true;
  }
  return internalReason(id, metadata?.toolType, metadata?.executorId) === undefined;
}

/** The tool's metadata from its verified text (undefined when no parser reads its extension). */
async function verifiedToolMetadata(executor: Executor, id: string): Promise<ToolMetadata | undefined> {
  const { item, text } = await executor.verifyItemFile('tool', id);
  const parser = (await executor.kinds.get('tool')).parsers[item.extension];
  // Through the executor's cache: a fresh process reads what an earlier one parsed, as a call does.
  return parser ? extractToolMetadata(text, item.path, parser, executor.cache) : undefined;
}

interface ToolDefinitionOf {
  description: string;
  schema: Record<string, unknown>;
  parallelSafe?: boolean;
}

async function toolDefinition(executor: Executor, id: string): Promise<ToolDefinitionOf> {
  const metadata = await verifiedToolMetadata(executor, id);
  const schema = (metadata && toolParameterSchema(metadata)) ?? { type: 'object', properties: {} };
  return {
    description: metadata?.description ?? id,
    schema,
    ...(metadata?.parallelSafe === true ? { parallelSafe: true } : {}),
  };
}

export interface OutputField {
  name: string;
  type: string;
  required: boolean;
  description?: string;
}

/** `rye_directive_return`: one property per declared output, plus optional status/error_detail. */
export function directiveReturnEntry(outputs: readonly OutputField[]): PaletteEntry {
  const properties: Record<string, unknown> = {};
  const fields = outputs.length ? outputs : [{ name: 'result', type: 'string', required: true }];
  for (const output of fields) {
    const type = ['string', 'number', 'integer', 'boolean', 'object', 'array'].includes(output.type)
      ? output.type
      : 'string';
    properties[output.name] = {
      type,
      ...('description' in output && output.description ? { description: output.description } : {}),
    };
  }
  properties.status = {
    type: 'string',
    enum: ['success', 'error'],
    description: 'error when the directive could not be completed',
  };
  properties.error_detail = {
    type: 'string',
    description: 'Why it could not be completed (with status "error")',
  };
  return {
    kind: 'directive_return',
    name: DIRECTIVE_RETURN_NAME,
    description:
      "Return the directive's structured outputs and finish. Call it once every step is done, with every required field.",
    schema: { type: 'object', properties, required: fields.filter((f) => f.required).map((f) => f.name) },
    itemId: DIRECTIVE_RETURN_ID,
    primary: 'execute',
  };
}

export const READ_ARTIFACT_ENTRY: PaletteEntry = {
  kind: 'internal',
  name: READ_ARTIFACT_NAME,
  description:
    'Read a tool result that was too long to show in full: pass the artifact_ref (or call_id) it named, and optionally offset/length in characters.',
  schema: {
    type: 'object',
    properties: {
      artifact_ref: { type: 'string', description: 'The _artifact_ref or call id of the shortened result' },
      offset: { type: 'integer', minimum: 0, default: 0 },
      length: { type: 'integer', minimum: 1, maximum: 20000, default: 8000 },
    },
    required: ['artifact_ref'],
  },
  itemId: READ_ARTIFACT_ID,
  primary: 'execute',
};

export interface BuildPaletteOptions {
  capabilities: readonly string[];
  primaries: readonly PrimaryToolSpec[];
  outputs?: readonly OutputField[];
  /** `resilience.yaml tool_preload`. */
  preload?: { enabled?: boolean; max_tokens?: number };
}

export async function buildPalette(executor: Executor, options: BuildPaletteOptions): Promise<Palette> {
  const grants = classifyCapabilities(options.capabilities);
  const entries: PaletteEntry[] = [];
  const warnings: string[] = [];
  let budgetUsed = 0;
  const cost = (e: ToolDefinition) => JSON.stringify(e.schema).length + e.description.length;

  for (const spec of options.primaries) {
    const types = grants.primaries.get(spec.name);
    if (!types) continue;
    const entry: PaletteEntry = {
      kind: 'primary',
      name: `rye_${spec.name}`,
      description: narrowed(spec, types),
      schema: spec.inputSchema,
      itemId: `rye/${spec.name}`,
      primary: spec.name,
    };
    entries.push(entry);
    budgetUsed += cost(entry);
  }

  const preload = options.preload ?? {};
  if (preload.enabled !== false && grants.executeToolPatterns.length) {
    const budget = (preload.max_tokens ?? 2000) * 4;
    const chosen: string[] = [];
    for (const pattern of grants.executeToolPatterns) {
      const matched = (await listToolIds(executor, pattern)).filter((id) => fnmatch(id, pattern));
      if (!matched.length) warnings.push(`No tool matches the capability pattern '${pattern}'`);
      for (const id of matched) if (!chosen.includes(id)) chosen.push(id);
    }
    for (const id of chosen) {
      const name = apiNameOf(id);
      if (name.length > 64 || entries.some((e) => e.name === name)) {
        warnings.push(`Tool ${id} left out of the palette: its API name '${name}' is too long or taken`);
        continue;
      }
      let definition: ToolDefinitionOf;
      try {
        definition = await toolDefinition(executor, id);
      } catch (error) {
        warnings.push(`Tool ${id} left out of the palette: ${(error as Error).message}`);
        continue;
      }
      const entry: PaletteEntry = { kind: 'tool', name, ...definition, itemId: id, primary: 'execute' };
      if (budgetUsed + cost(entry) > budget) {
        warnings.push(`Tool ${id} left out of the palette: over the tool_preload budget (use rye_execute)`);
        continue;
      }
      budgetUsed += cost(entry);
      entries.push(entry);
    }
  }
  if (options.outputs) entries.push(directiveReturnEntry(options.outputs));
  return paletteOfEntries(entries, warnings);
}

/** A palette of these entries, indexed by name. */
export function paletteOfEntries(entries: PaletteEntry[], warnings: string[]): Palette {
  return { entries, byName: new Map(entries.map((e) => [e.name, e])), warnings };
}
