/**
 * Arguments of the four operations, checked against the JSON Schemas `@ryeos/mcp` publishes: the
 * one source of what each operation accepts, for MCP clients, the API and the CLI alike. A new
 * parameter is a schema change (plus its use); nothing here lists parameters by hand.
 */

import type { SchemaIssue } from '@ryeos/lillux';
import { RyeError, validateSchema } from '@ryeos/lillux';
import type { InputSchema, JsonSchema, ToolName } from '@ryeos/mcp/tools';
import { toolSchema } from '@ryeos/mcp/tools';

/** Arguments as a caller sent them: `null` means "not given" (many MCP clients send it). */
function present(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).filter(([, value]) => value !== undefined && value !== null),
  );
}

/**
 * The schema a request to the API is checked against: the tool's, without `project_path` (a
 * `Rye` is bound to its project). Derived once per schema.
 */
const requestSchemas = new WeakMap<InputSchema, InputSchema>();
function requestSchema(schema: InputSchema): InputSchema {
  let derived = requestSchemas.get(schema);
  if (!derived) {
    const { project_path: _project, ...properties } = schema.properties;
    derived = { ...schema, properties, required: schema.required.filter((name) => name !== 'project_path') };
    requestSchemas.set(schema, derived);
  }
  return derived;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function schemaAt(schema: JsonSchema | InputSchema, path: string[]): JsonSchema | undefined {
  let current: JsonSchema | undefined = schema as JsonSchema;
  for (const name of path) current = current?.properties?.[name] ?? current?.items;
  return current;
}

function valueAt(value: unknown, path: string[]): unknown {
  let current = value;
  for (const name of path) current = (current as Record<string, unknown> | undefined)?.[name];
  return current;
}

function listed(values: readonly unknown[]): string {
  const words = values.map(String);
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}

/** One issue in the words an agent can act on, naming the argument and what it must be. */
function describe(issue: SchemaIssue, schema: InputSchema, args: Record<string, unknown>): string {
  const name = issue.path.join('.') || 'arguments';
  const value = valueAt(args, issue.path);
  switch (issue.keyword) {
    case 'type':
      return `${name} must be ${article(String(issue.params.type))}, got ${JSON.stringify(value)}`;
    case 'enum':
      return `Unknown ${name} '${String(value)}'. Must be ${listed(issue.params.allowedValues as unknown[])}.`;
    case 'required':
      return `${[...issue.path, String(issue.params.missingProperty)].join('.')} is required`;
    case 'additionalProperties': {
      const known = Object.keys(schemaAt(schema, issue.path)?.properties ?? {});
      return `Unknown ${name}: ${String(issue.params.additionalProperty)}. Valid ${name}: ${known.join(', ')}`;
    }
    case 'minimum':
      return `${name} must be ≥ ${String(issue.params.limit)}, got ${JSON.stringify(value)}`;
    default:
      return `${name} is invalid (${issue.keyword})`;
  }
}

/**
 * Checks arguments against an input schema; throws one VALIDATION error naming every problem.
 * `forApi`: the arguments of a `Rye` call (no `project_path`).
 */
export function checkArguments<T>(
  schema: InputSchema,
  args: Record<string, unknown>,
  options: { forApi?: boolean } = {},
): T {
  const given = present(args);
  const against = options.forApi ? requestSchema(schema) : schema;
  // A required argument with a default may be left out (search's query: "" lists everything).
  for (const name of against.required) {
    const fallback = against.properties[name]?.default;
    if (!(name in given) && fallback !== undefined) given[name] = fallback;
  }
  const result = validateSchema(against as unknown as Record<string, unknown>, given);
  if (!result.valid) {
    // One message per argument: ajv may report a value against several keywords.
    const messages = [...new Set(result.issues.map((issue) => describe(issue, against, given)))];
    const hint = messages.some((m) => m.includes('must be an object'))
      ? 'Pass objects as JSON objects, not as strings.'
      : 'Fix the arguments listed (each tool lists its parameters in its input schema).';
    throw new RyeError('VALIDATION', messages.join('; '), { hint, details: { problems: messages } });
  }
  return given as T;
}

/** Checks the arguments of one of the four operations against its published schema. */
export function checkToolArguments<T>(name: ToolName, args: Record<string, unknown>, options = {}): T {
  return checkArguments<T>(toolSchema(name), args, options);
}
