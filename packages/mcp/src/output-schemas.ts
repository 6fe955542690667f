/**
 * What each of the four tools answers, as the MCP `outputSchema` of its `structuredContent`,
 * and how a client may treat it (`annotations`). The replies are ryeos envelopes: every field a
 * client may rely on is typed here, and a reply may carry more (new fields are not a break).
 */
import type { ToolName } from './tools.js';

type Schema = Record<string, unknown>;

const STRING = { type: 'string' } as const;
const STRINGS = { type: 'array', items: STRING } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;

/** What every reply may carry: its status, and on failure what went wrong and how to fix it. */
const ENVELOPE: Record<string, Schema> = {
  status: {
    type: 'string',
    enum: ['success', 'partial', 'signed', 'completed', 'validation_passed', 'error'],
    description: '"error" when the call failed (error, error_type and hint say why and how to fix it).',
  },
  error: STRING,
  error_type: {
    type: 'string',
    description: 'The class of the failure (validation, not_found, integrity, …).',
  },
  hint: { type: 'string', description: 'What to do next, ending with the call that fixes it.' },
  fix: { type: 'object', description: 'The fix as data (an action such as sign, and its refs).' },
  item_id: { type: 'string', description: 'The canonical ref of the item, e.g. "tool:rye/bash".' },
  type: { type: 'string', enum: ['tool', 'directive', 'knowledge', 'config'] },
  warnings: STRINGS,
  metadata: { type: 'object' },
  truncated: { type: 'boolean', description: 'The reply was too large: `partial` holds its beginning.' },
  partial: STRING,
};

function envelope(properties: Record<string, Schema>): Schema {
  return { type: 'object', properties: { ...ENVELOPE, ...properties }, additionalProperties: true };
}

const SEARCH_RESULT = {
  type: 'object',
  properties: {
    id: STRING,
    ref: { type: 'string', description: 'What load and execute take.' },
    type: STRING,
    name: STRING,
    title: STRING,
    description: STRING,
    category: STRING,
    source: { type: 'string', enum: ['project', 'user', 'system'] },
    path: STRING,
    version: STRING,
    score: { type: 'number' },
    signed: { type: 'boolean' },
    parameters: { type: 'object', additionalProperties: STRING },
    inputs: STRINGS,
  },
} as const;

export const OUTPUT_SCHEMAS: Readonly<Record<ToolName, Schema>> = {
  search: envelope({
    results: { type: 'array', items: SEARCH_RESULT },
    total: COUNT,
    query: STRING,
    scope: STRING,
    space: STRING,
    limit: COUNT,
    offset: COUNT,
    search_type: STRING,
    hidden: COUNT,
  }),
  load: envelope({
    content: { type: 'string', description: 'The item file, as verified.' },
    path: STRING,
    source: { type: 'string', enum: ['project', 'user', 'system'] },
    copied_to: { type: 'string', enum: ['project', 'user'] },
    destination_path: STRING,
    copied_files: STRINGS,
    parameters: { type: 'object', additionalProperties: STRING },
  }),
  execute: envelope({
    data: { description: "A tool's own result." },
    chain: { ...STRINGS, description: "The tool's chain: tool first, primitive last." },
    your_directions: { type: 'string', description: 'An inline directive: follow these now.' },
    thread_id: { type: 'string', description: 'A forked directive’s managed thread.' },
    thread_status: STRING,
    result: { type: 'string', description: "A forked directive's final answer." },
    outputs: { type: 'object', description: "A forked directive's declared outputs." },
    cost: {
      type: 'object',
      properties: {
        turns: COUNT,
        input_tokens: COUNT,
        output_tokens: COUNT,
        spend: { type: 'number' },
      },
    },
    async: { type: 'boolean' },
    state: STRING,
    validated_pairs: STRINGS,
  }),
  sign: envelope({
    path: STRING,
    signature: { type: 'object', description: 'The signature line written.' },
    signed: { type: 'array' },
    failed: { type: 'array' },
    summary: STRING,
  }),
};

export interface ToolAnnotations {
  title: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * Hints for clients (never a guarantee they may rely on for security): `search` and `load`
 * read items (load's `destination` copies one into a space, never deleting or rewriting the
 * original); `sign` rewrites only signature lines, and signing twice signs the same; `execute`
 * runs tools and agents that may do anything their grants allow.
 */
export const TOOL_ANNOTATIONS: Readonly<Record<ToolName, ToolAnnotations>> = {
  search: { title: 'Search items', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  load: { title: 'Load an item', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execute: { title: 'Execute an item', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  sign: {
    title: 'Sign items',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
};
