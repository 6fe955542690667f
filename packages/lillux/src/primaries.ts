/**
 * The four operations every caller reaches (search, load, execute, sign), as plain data: names,
 * descriptions that teach an agent how to use them, and JSON Schemas (draft-07 keywords only)
 * describing every parameter. `@ryeos/mcp` serves them as its MCP tools and `@ryeos/threads` offers
 * them to a model as its `rye_*` tools; they live here, at the bottom layer, so both read the same
 * objects and neither pulls the other in. This module imports nothing.
 */
export const TOOL_NAMES = ['search', 'load', 'execute', 'sign'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** The subset of JSON Schema these definitions use. */
export interface JsonSchema {
  type?: 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array';
  description?: string;
  enum?: readonly string[];
  default?: unknown;
  minimum?: number;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
}

/** A tool's input schema: an object of named parameters. */
export interface InputSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, JsonSchema>>;
  readonly required: readonly string[];
}

export interface ToolDefinition {
  readonly name: ToolName;
  readonly description: string;
  readonly inputSchema: InputSchema;
}

/** The TypeScript type of a value a (const) schema describes. */
export type ValueOf<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly type: 'string' }
    ? string
    : S extends { readonly type: 'integer' | 'number' }
      ? number
      : S extends { readonly type: 'boolean' }
        ? boolean
        : S extends { readonly type: 'array'; readonly items: infer I }
          ? ValueOf<I>[]
          : S extends { readonly type: 'array' }
            ? unknown[]
            : S extends { readonly type: 'object'; readonly properties: infer P; readonly required: infer R }
              ? ObjectOf<P, R extends readonly string[] ? R[number] : never>
              : S extends { readonly type: 'object'; readonly properties: infer P }
                ? ObjectOf<P, never>
                : S extends { readonly type: 'object'; readonly additionalProperties: infer A }
                  ? Record<string, ValueOf<A>>
                  : S extends { readonly type: 'object' }
                    ? Record<string, unknown>
                    : unknown;

type ObjectOf<P, Required extends string> = {
  -readonly [K in keyof P & Required]: ValueOf<P[K]>;
} & {
  -readonly [K in Exclude<keyof P, Required>]?: ValueOf<P[K]>;
};

/** The arguments an input schema describes (required ones required, the rest optional). */
export type ArgsOf<S extends InputSchema> = Simplify<ValueOf<S>>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

const PROJECT_PATH = {
  type: 'string',
  description:
    'Absolute path of the project root (the directory that holds .ai/). Required on every call; there is no default project.',
} as const satisfies JsonSchema;

const ITEM_TYPE = {
  type: 'string',
  enum: ['directive', 'tool', 'knowledge'],
  description: 'Kind of the item. Optional when item_id is a canonical ref such as "tool:rye/bash".',
} as const satisfies JsonSchema;

const SEARCH_DESCRIPTION = `Find directives (workflows), tools (code) and knowledge (docs) by keyword in the project, user and system spaces. Use it to discover an item's id before load or execute, unless the user named the item ("rye execute X": execute X directly).
scope = kind + optional namespace: "directive", "tool", "knowledge", "tool.rye.file-system.*" or the capability form "rye.search.directive.*".
query: words are ANDed; AND, OR, NOT, (parentheses), "exact phrase", wildcards (file*); "*" or "" lists all. fuzzy tolerates typos; proximity keeps terms close; fields/filters match fields or metadata.
Best match first: ref (for load/execute), description, source space, score, signed; tools add parameters ({name: "type, required — meaning"}): no load needed to call one. include_internal adds runtimes, primitives, extractors, libraries. System knowledge is the manual: search scope "knowledge" (query "rye").`;

const LOAD_DESCRIPTION = `Read an item's content and metadata without running it: inspect a directive's inputs, a tool's parameters or a knowledge entry. Looks in project, then user, then system space unless source is given; content is integrity-verified.
To customise an item, copy it with destination ("project" or "user"); the reply gives destination_path. Edit that file, then call sign on it: a copy of a system item must be signed in its new space before it runs, and every edit must be re-signed. System items are never edited in place.`;

const EXECUTE_DESCRIPTION = `Run an item. When the user says "rye execute X", call this directly with item_id X: do not search first and never ask for confirmation. Extra words in the request are parameters (e.g. "rye execute web/fetch url https://x.dev" -> parameters {"url": "https://x.dev"}).
directive: the reply's your_directions are your instructions; follow them immediately (render <render> blocks verbatim, act on <instruction> blocks silently). tool: runs and returns data. knowledge: returns its content.
Unknown parameter keys come back as an error listing the valid inputs; fix and retry. dry_run validates without running. thread "fork" runs a directive in its own managed LLM thread (needs a provider, e.g. ANTHROPIC_API_KEY) and returns its result, outputs and cost. async: true runs a forked directive (or a tool) detached: the reply is its thread_id. target "remote[:name]" runs it on a ryeos-remote server.`;

const SIGN_DESCRIPTION = `Validate an item and sign it with your Ed25519 key. Sign after every create, edit or copy: unsigned or modified items are refused by load and execute with an integrity error.
item_id: an id, a canonical ref ("tool:acme/fetch", "config:agent") or a glob ("acme/*"; a pattern without "/" matches at any depth, "*" signs every item of item_type). source is the space to sign in: "project" (default) or "user". System items are immutable: copy them first with load(destination), then sign the copy.
Validation failures list the issues to fix. Needs a signing key ("rye keys generate", then trust it).`;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export const SEARCH_SCHEMA = {
  type: 'object',
  properties: {
    scope: {
      type: 'string',
      description:
        'Kind and optional namespace: "directive", "tool", "knowledge", "tool.rye.core.*" (namespace rye/core/), or "rye.search.<kind>[.<namespace>].*".',
    },
    query: {
      type: 'string',
      description:
        'Keywords. Juxtaposed words = AND; also AND, OR, NOT, ( ), "exact phrase", wildcards (file*, *search). "*" or "" matches everything.',
    },
    project_path: PROJECT_PATH,
    space: {
      type: 'string',
      enum: ['project', 'user', 'system', 'local', 'all'],
      default: 'all',
      description:
        'Where to look: "project", "user" or "system" alone, or "all" (the same as "local": all three).',
    },
    limit: { type: 'integer', minimum: 1, default: 10, description: 'Maximum results to return.' },
    offset: { type: 'integer', minimum: 0, default: 0, description: 'Results to skip (pagination).' },
    sort_by: {
      type: 'string',
      enum: ['score', 'name', 'date'],
      default: 'score',
      description: 'score = best match first; name = alphabetical; date = newest first.',
    },
    fields: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        'Per-field sub-queries that must all match, e.g. {"category": "rye/file-system", "name": "read*"}.',
    },
    filters: {
      type: 'object',
      description:
        'Metadata filters, e.g. {"tags": ["git"], "version": ">=1.0.0", "category": "!rye/core", "date_from": "2025-01-01"}.',
    },
    fuzzy: {
      type: 'object',
      properties: {
        enabled: { type: 'boolean', default: false },
        max_distance: { type: 'integer', minimum: 0, description: 'Maximum edit distance per word.' },
      },
      description: 'Typo tolerance: a term that is not found matches words within max_distance edits.',
    },
    proximity: {
      type: 'object',
      properties: {
        enabled: { type: 'boolean', default: false },
        max_distance: { type: 'integer', minimum: 0, default: 5, description: 'Maximum words apart.' },
      },
      description: 'Require the query terms to occur within max_distance words of each other.',
    },
    include_internal: {
      type: 'boolean',
      default: false,
      description:
        'Also list tools that are not called directly: runtimes, primitives, extractors, libraries (a tool_type filter such as {"tool_type": "runtime"} lists those too).',
    },
  },
  required: ['scope', 'query', 'project_path'],
} as const satisfies InputSchema;

export const LOAD_SCHEMA = {
  type: 'object',
  properties: {
    item_id: {
      type: 'string',
      description: 'Canonical ref ("directive:init", "tool:rye/bash") or an id with item_type.',
    },
    item_type: ITEM_TYPE,
    project_path: PROJECT_PATH,
    source: {
      type: 'string',
      enum: ['project', 'user', 'system'],
      description: 'Load only from this space. Default: the first of project, user, system that has it.',
    },
    destination: {
      type: 'string',
      enum: ['project', 'user'],
      description: 'Copy the item into this space (to customise it; sign the copy afterwards).',
    },
  },
  required: ['item_id', 'project_path'],
} as const satisfies InputSchema;

export const EXECUTE_SCHEMA = {
  type: 'object',
  properties: {
    item_id: {
      type: 'string',
      description: 'What to run: canonical ref ("directive:init", "tool:rye/bash") or a bare id.',
    },
    item_type: ITEM_TYPE,
    project_path: PROJECT_PATH,
    parameters: {
      type: 'object',
      default: {},
      description: 'Directive inputs or tool parameters, e.g. {"path": "README.md"}.',
    },
    dry_run: { type: 'boolean', default: false, description: 'Validate only; run nothing.' },
    target: {
      type: 'string',
      default: 'local',
      description:
        '"local" (default), "remote" (the default remote of .ai/config/remotes/remotes.yaml) or "remote:<name>": a tool runs inline on that server, a directive with thread "fork"; the reply carries the server\'s result and thread_id.',
    },
    thread: {
      type: 'string',
      enum: ['inline', 'fork'],
      default: 'inline',
      description:
        'inline: a directive returns your_directions for you to follow. "fork": the directive runs in its own managed LLM thread (its own model, tools, limits) and the reply carries its result, outputs, cost and thread_id.',
    },
    async: {
      type: 'boolean',
      default: false,
      description:
        'Run detached: a forked directive or a tool goes on in a process of its own and the reply is at once {async: true, thread_id, state: "running", pid}; wait for its result with rye/agent/threads/orchestrator (operation wait_threads).',
    },
    model: {
      type: 'string',
      description:
        'For thread "fork": a model id or tier (fast, general, high, max) instead of the directive\'s own.',
    },
    limit_overrides: {
      type: 'object',
      properties: {
        turns: { type: 'integer', minimum: 0, description: 'Maximum LLM turns.' },
        tokens: { type: 'integer', minimum: 0, description: 'Maximum tokens.' },
        spend: { type: 'number', minimum: 0, description: 'Maximum spend in USD.' },
        spawns: { type: 'integer', minimum: 0, description: 'Maximum child threads.' },
        duration_seconds: { type: 'number', minimum: 0, description: 'Maximum wall-clock seconds.' },
        depth: { type: 'integer', minimum: 0, description: 'Maximum thread nesting depth.' },
      },
      additionalProperties: false,
      description:
        'For thread "fork": lower the thread limits (never above what the directive or its parent allows).',
    },
    trace: {
      type: 'boolean',
      default: false,
      description: 'Tools only: include the execution chain trace in the reply.',
    },
  },
  required: ['item_id', 'project_path'],
} as const satisfies InputSchema;

export const SIGN_SCHEMA = {
  type: 'object',
  properties: {
    item_id: {
      type: 'string',
      description: 'Id, canonical ref ("tool:acme/fetch", "config:agent") or glob ("acme/*", "*").',
    },
    item_type: {
      type: 'string',
      enum: ['directive', 'tool', 'knowledge', 'config'],
      description: 'Kind of the item(s). Optional when item_id is a canonical ref.',
    },
    project_path: PROJECT_PATH,
    source: {
      type: 'string',
      enum: ['project', 'user'],
      default: 'project',
      description: 'The space whose items are signed. System items are immutable.',
    },
  },
  required: ['item_id', 'project_path'],
} as const satisfies InputSchema;

/** The arguments of each tool, derived from its schema: the schema is the single source. */
export type SearchArgs = ArgsOf<typeof SEARCH_SCHEMA>;
export type LoadArgs = ArgsOf<typeof LOAD_SCHEMA>;
export type ExecuteArgs = ArgsOf<typeof EXECUTE_SCHEMA>;
export type SignArgs = ArgsOf<typeof SIGN_SCHEMA>;

export interface ToolArgs {
  search: SearchArgs;
  load: LoadArgs;
  execute: ExecuteArgs;
  sign: SignArgs;
}

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = deepFreeze<ToolDefinition[]>([
  { name: 'search', description: SEARCH_DESCRIPTION, inputSchema: SEARCH_SCHEMA },
  { name: 'load', description: LOAD_DESCRIPTION, inputSchema: LOAD_SCHEMA },
  { name: 'execute', description: EXECUTE_DESCRIPTION, inputSchema: EXECUTE_SCHEMA },
  { name: 'sign', description: SIGN_DESCRIPTION, inputSchema: SIGN_SCHEMA },
]);

/**
 * The schema of an API request for a tool: the tool's, without `project_path` (an API object is
 * bound to its project already).
 */
export function withoutProjectPath(schema: InputSchema): InputSchema {
  const { project_path: _project, ...properties } = schema.properties;
  return { ...schema, properties, required: schema.required.filter((name) => name !== 'project_path') };
}

/** The input schema of one tool. */
export function toolSchema(name: ToolName): ToolDefinition['inputSchema'] {
  return TOOL_DEFINITIONS.find((tool) => tool.name === name)!.inputSchema;
}
