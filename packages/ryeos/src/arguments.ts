/**
 * Arguments of the four operations, checked against the JSON Schemas `@ryeos/mcp` publishes: the
 * one source of what each operation accepts, for MCP clients, the API and the CLI alike. A new
 * parameter is a schema change (plus its use); nothing here lists parameters by hand.
 */

import type { SchemaIssue } from '@ryeos/lillux';
import { RyeError, schemaIssues, validateSchema } from '@ryeos/lillux';
import type { InputSchema, JsonSchema, ToolName } from '@ryeos/mcp/tools';
import { toolSchema, withoutProjectPath } from '@ryeos/mcp/tools';
import { FIX_ARGUMENTS_HINT } from './argument-hint.js';
import type { CompiledArguments } from './generated/compiled-validator.js';

/** Arguments as a caller sent them: `null` means "not given" (many MCP clients send it). */
function present(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).filter(([, value]) => value !== undefined && value !== null),
  );
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

/** What a validation found, in the words an agent can act on; throws when anything is wrong. */
function refuse(issues: SchemaIssue[], schema: InputSchema, given: Record<string, unknown>): never {
  // One message per argument: ajv may report a value against several keywords.
  const messages = [...new Set(issues.map((issue) => describe(issue, schema, given)))];
  const hint = messages.some((m) => m.includes('must be an object'))
    ? 'Pass objects as JSON objects, not as strings.'
    : FIX_ARGUMENTS_HINT;
  throw new RyeError('VALIDATION', messages.join('; '), { hint, details: { problems: messages } });
}

/**
 * Checks arguments against any input schema (compiled on first use by lillux's validateSchema);
 * throws one VALIDATION error naming every problem.
 */
export function checkArguments<T>(schema: InputSchema, args: Record<string, unknown>): T {
  const given = present(args);
  const result = validateSchema(schema as unknown as Record<string, unknown>, given);
  if (!result.valid) refuse(result.issues, schema, given);
  return given as T;
}

/**
 * The check of one operation's arguments against its published schema, with the validator
 * compiled from it at build time (`generated/<operation>-arguments.js`, one module per operation,
 * so each verb loads only its own). It throws one VALIDATION error naming every problem.
 */
export function argumentChecker<T>(
  name: ToolName,
  compiled: CompiledArguments,
): (args: Record<string, unknown>) => T {
  // The schema the validator was compiled from, derived on first use, for the messages.
  let schema: InputSchema | undefined;
  return (args) => {
    schema ??= compiled.FOR_API ? withoutProjectPath(toolSchema(name)) : toolSchema(name);
    const given = present(args);
    if (!compiled.validate(given)) refuse(schemaIssues(compiled.validate.errors ?? []), schema, given);
    return given as T;
  };
}
