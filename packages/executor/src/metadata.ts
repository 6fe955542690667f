/**
 * Tool metadata, read statically by the parser the extractor names for the file's extension
 * (spec items §2.1). Tool code is never imported or run here.
 */
import { RyeError } from '@ryeos/lillux';
import { ContentCache } from './content-cache.js';
import { parseJavaScriptMetadata } from './parsers/javascript.js';
import { parsePythonMetadata } from './parsers/python.js';
import { parseShellMetadata } from './parsers/shell.js';
import type { MetadataParser, ParsedMetadata } from './parsers/types.js';
import { parseYamlDocument } from './parsers/yaml.js';

export interface ToolMetadata {
  version?: string;
  toolType?: string;
  /** Next chain element; null/undefined = terminal (a primitive). */
  executorId?: string | null;
  category?: string;
  description?: string;
  configSchema?: Record<string, unknown>;
  envConfig?: Record<string, unknown>;
  config?: Record<string, unknown>;
  configResolve?: unknown;
  anchor?: Record<string, unknown>;
  verifyDeps?: Record<string, unknown>;
  inputs?: string[];
  outputs?: string[];
  childConstraints?: Record<string, { min_version?: string; max_version?: string }>;
  /** The tool's calls may run side by side (a read-only tool); absent means one after another. */
  parallelSafe?: boolean;
  /** Every field the parser found, as written. */
  fields: Record<string, unknown>;
}

function yamlParser(text: string, path: string): ParsedMetadata {
  const fields = parseYamlDocument(text, path);
  const lines: Record<string, number> = {};
  const all = text.split('\n');
  for (const key of Object.keys(fields)) {
    const index = all.findIndex((line) => line.startsWith(`${key}:`));
    lines[key] = index === -1 ? 1 : index + 1;
  }
  return { fields, lines };
}

const PARSERS: Record<string, MetadataParser> = {
  'python/ast': parsePythonMetadata,
  'javascript/javascript': parseJavaScriptMetadata,
  'shell/comment': parseShellMetadata,
  'yaml/yaml': yamlParser,
};

export function parserFor(name: string): MetadataParser {
  const parser = PARSERS[name];
  if (!parser)
    throw new RyeError('CONFIG', `Parser not found: ${name}`, {
      hint: `Known parsers: ${Object.keys(PARSERS).join(', ')}`,
    });
  return parser;
}

type Expect = 'string' | 'object' | 'string-or-null' | 'string-list' | 'boolean' | 'any';

/** Field → [names to try in order, expected type]. Dunder/UPPER first, then bare/lower (§2.1). */
const FIELDS: Record<Exclude<keyof ToolMetadata, 'fields'>, [string[], Expect]> = {
  version: [['__version__', 'version'], 'string'],
  toolType: [['__tool_type__', 'tool_type'], 'string'],
  executorId: [['__executor_id__', 'executor_id'], 'string-or-null'],
  category: [['__category__', 'category'], 'string'],
  description: [['__tool_description__', 'description', '__description__'], 'string'],
  configSchema: [['CONFIG_SCHEMA', 'config_schema', 'input_schema'], 'object'],
  envConfig: [['ENV_CONFIG', 'env_config'], 'object'],
  config: [['CONFIG', 'config'], 'object'],
  configResolve: [['CONFIG_RESOLVE', 'config_resolve'], 'any'],
  anchor: [['anchor'], 'object'],
  verifyDeps: [['verify_deps'], 'object'],
  inputs: [['inputs'], 'string-list'],
  outputs: [['outputs'], 'string-list'],
  childConstraints: [['child_constraints'], 'object'],
  parallelSafe: [['__parallel_safe__', 'parallel_safe'], 'boolean'],
};

function typeOk(value: unknown, expect: Expect): boolean {
  switch (expect) {
    case 'string':
      return typeof value === 'string' || typeof value === 'number';
    case 'string-or-null':
      return value === null || typeof value === 'string';
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'string-list':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

const EXPECTED: Record<Expect, string> = {
  string: 'a string',
  'string-or-null': 'a string or null',
  object: 'a mapping',
  'string-list': 'a list of strings',
  boolean: 'true or false',
  any: 'a value',
};

const processCache = new ContentCache();

/** The content-cache namespace of one parser's tool metadata. */
export function toolNamespace(parserName: string): string {
  return `tool:${parserName}`;
}

/**
 * Reads and normalises tool metadata; malformed fields fail with file, line and field.
 * Results are cached by content (see ContentCache), in memory and optionally on disk.
 */
export function extractToolMetadata(
  text: string,
  path: string,
  parserName: string,
  cache: ContentCache = processCache,
): ToolMetadata {
  return cache.derive(toolNamespace(parserName), path, text, () => parseToolMetadata(text, path, parserName));
}

/** Parses tool metadata, uncached. */
export function parseToolMetadata(text: string, path: string, parserName: string): ToolMetadata {
  const parsed = parserFor(parserName)(text, path);
  const nested =
    parsed.fields.data && typeof parsed.fields.data === 'object'
      ? (parsed.fields.data as Record<string, unknown>)
      : {};
  const metadata: ToolMetadata = { fields: parsed.fields };
  for (const [key, [names, expect]] of Object.entries(FIELDS)) {
    for (const source of [parsed.fields, nested]) {
      const name = names.find((n) => n in source);
      if (name === undefined) continue;
      const value = source[name];
      if (value === undefined) break;
      if (!typeOk(value, expect)) {
        const line = parsed.lines[name] ?? 1;
        throw new RyeError(
          'VALIDATION',
          `Malformed metadata in ${path}:${line}: ${name}: expected ${EXPECTED[expect]}`,
          {
            hint: 'Fix the field, then re-sign the item.',
            details: { path, line, field: name },
          },
        );
      }
      (metadata as unknown as Record<string, unknown>)[key] = expect === 'string' ? String(value) : value;
      break;
    }
  }
  return metadata;
}
