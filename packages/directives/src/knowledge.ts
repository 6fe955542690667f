/**
 * The `markdown/frontmatter` parser for knowledge (spec items §2.3, DECISIONS 8): metadata in a
 * `---` front-matter block at the start, or else in the first ```yaml fence; the body follows.
 * Pure `.yaml/.yml` knowledge is one mapping (after a leading `<!-- … -->` comment).
 */
import { createRequire } from 'node:module';
import { RyeError } from '@ryeos/lillux';
import { findFence } from './fence.js';

export interface ParsedKnowledge {
  name: string;
  title?: string;
  version?: string;
  entry_type?: string;
  category?: string;
  tags?: string[];
  /** Every metadata field as written. */
  fields: Record<string, unknown>;
  body: string;
  raw: string;
}

interface YamlModule {
  parse(text: string): unknown;
  YAMLParseError: new (...args: never[]) => Error & { linePos?: [{ line: number }] };
}
let yaml: YamlModule | undefined;

const SIGNATURE_COMMENT = /^<!--[^\n]*-->\n/;

function parseYaml(text: string, path: string, lineOffset: number): Record<string, unknown> {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  let value: unknown;
  try {
    value = yaml.parse(text);
  } catch (error) {
    const line = ((error as { linePos?: [{ line: number }] }).linePos?.[0]?.line ?? 1) + lineOffset;
    // The library's own "at line X, column Y" counts from the block, not the file: drop it.
    const reason = (error as Error).message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new RyeError(
      'VALIDATION',
      `Invalid knowledge ${path}:${line}: metadata is not valid YAML: ${reason}`,
      {
        hint: 'Fix the YAML metadata block, then re-sign the item.',
        details: { path, line },
      },
    );
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new RyeError(
      'VALIDATION',
      `Invalid knowledge ${path}:${lineOffset + 1}: metadata must be a YAML mapping`,
      {
        details: { path, line: lineOffset + 1 },
      },
    );
  }
  return value as Record<string, unknown>;
}

function frontMatter(text: string): { yaml: string; body: string; line: number } | undefined {
  if (!text.startsWith('---\n')) return undefined;
  const end = text.indexOf('\n---', 3);
  if (end === -1) return undefined;
  const after = text.indexOf('\n', end + 4);
  return { yaml: text.slice(4, end + 1), body: after === -1 ? '' : text.slice(after + 1).trim(), line: 1 };
}

function build(fields: Record<string, unknown>, body: string, raw: string, id: string): ParsedKnowledge {
  const str = (key: string) =>
    typeof fields[key] === 'string' || typeof fields[key] === 'number' ? String(fields[key]) : undefined;
  const knowledge: ParsedKnowledge = { name: str('name') ?? id.split('/').pop() ?? id, fields, body, raw };
  for (const key of ['title', 'version', 'entry_type', 'category'] as const) {
    const value = str(key);
    if (value !== undefined) knowledge[key] = value;
  }
  if (Array.isArray(fields.tags)) knowledge.tags = fields.tags.map(String);
  return knowledge;
}

/**
 * Parses knowledge text; `id` gives the default name, `path` is for messages and the format.
 * `known`: the metadata block's fields as already parsed from these exact bytes (a system
 * bundle's signed index), so the YAML parser is not needed.
 */
export function parseKnowledge(
  text: string,
  path: string,
  id: string,
  known?: Record<string, unknown>,
): ParsedKnowledge {
  const signed = SIGNATURE_COMMENT.exec(text);
  const rest = signed ? text.slice(signed[0].length) : text;
  const offset = signed ? 1 : 0;
  const fields = (yamlText: string, lineOffset: number) => known ?? parseYaml(yamlText, path, lineOffset);
  if (/\.ya?ml$/.test(path)) return build(fields(rest, offset), '', text, id);
  const front = frontMatter(rest);
  if (front) return build(fields(front.yaml, offset + 1), front.body, text, id);
  const fence = findFence(rest, 'yaml');
  if (fence) return build(fields(fence.content, offset + fence.contentLine - 1), fence.body, text, id);
  return build({}, rest.trim(), text, id);
}
