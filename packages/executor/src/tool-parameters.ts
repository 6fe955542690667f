/**
 * A tool's declared parameters (spec items §2.1: `CONFIG_SCHEMA` / `config_schema` /
 * `input_schema`, or a YAML tool's `parameters` list), checked before anything runs, and shown
 * compactly so an agent never has to read a tool's source to learn how to call it.
 *
 * Validation uses @cfworker/json-schema: a well-kept, dependency-free JSON Schema validator that
 * interprets schemas instead of compiling them. On the cold path (one `rye execute`) it costs
 * ~9 ms to load where ajv costs ~60 ms to load and compile; on the warm path a validator is kept
 * per schema.
 */
import { RyeError } from '@ryeos/lillux';
import type { ToolMetadata } from './metadata.js';
import type { ParameterSchema } from './parameter-summary.js';
import { parameterSummary } from './parameter-summary.js';
import { isPlainObject } from './plain-object.js';

export type { ParameterSchema };

/**
 * Parameters the executor itself reads from any tool's call (a shorter timeout, the HTTP read
 * mode, a working directory) and the `__`-prefixed pass-through keys: never the tool's schema's
 * concern unless it declares them.
 */
const EXECUTOR_PARAMETERS = new Set(['timeout', 'mode', 'cwd', 'resolved_config']);

/** A YAML `parameters` list entry (`{name, type, required, description, …}`) as a property schema. */
function listEntrySchema(entry: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, required: _required, ...rest } = entry;
  return rest;
}

/** The JSON Schema of a tool's parameters, or undefined when it declares none. */
export function toolParameterSchema(
  metadata: Pick<ToolMetadata, 'configSchema' | 'fields'>,
): ParameterSchema | undefined {
  if (isPlainObject(metadata.configSchema)) return metadata.configSchema as ParameterSchema;
  const parameters = metadata.fields.parameters;
  if (Array.isArray(parameters)) {
    const properties: Record<string, Record<string, unknown>> = {};
    const required: string[] = [];
    for (const entry of parameters) {
      if (!isPlainObject(entry) || typeof entry.name !== 'string') continue;
      properties[entry.name] = listEntrySchema(entry);
      if (entry.required === true) required.push(entry.name);
    }
    return { type: 'object', properties, ...(required.length ? { required } : {}) };
  }
  if (isPlainObject(parameters)) {
    return { type: 'object', properties: parameters as Record<string, Record<string, unknown>> };
  }
  return undefined;
}

interface SchemaValidator {
  validate(instance: unknown): { valid: boolean; errors: SchemaError[] };
}

type ValidatorClass = new (schema: object, draft?: string, shortCircuit?: boolean) => SchemaValidator;

let validatorClass: Promise<ValidatorClass> | undefined;
const validators = new Map<string, SchemaValidator>();

/** The validator of one schema, loaded on first use and kept per schema text. */
async function validatorFor(schema: ParameterSchema): Promise<SchemaValidator> {
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (!validator) {
    validatorClass ??= import('@cfworker/json-schema').then((m) => m.Validator as unknown as ValidatorClass);
    const Validator = await validatorClass;
    validator = new Validator(schema, '2020-12', false);
    if (validators.size >= 256) validators.delete(validators.keys().next().value!);
    validators.set(key, validator);
  }
  return validator;
}

/** The caller's parameters as the tool's schema sees them (executor keys and `__` keys aside). */
function forSchema(schema: ParameterSchema, params: Record<string, unknown>): Record<string, unknown> {
  const declared = isPlainObject(schema.properties) ? schema.properties : {};
  return Object.fromEntries(
    Object.entries(params).filter(
      ([key]) => Object.hasOwn(declared, key) || !(key.startsWith('__') || EXECUTOR_PARAMETERS.has(key)),
    ),
  );
}

/** `#/a/0/b` → `a[0].b`; the root is `parameters`. */
function pathOf(location: string): string {
  const segments = location.replace(/^#\/?/, '').split('/').filter(Boolean);
  let path = '';
  for (const raw of segments) {
    const segment = decodeURIComponent(raw.replace(/~1/g, '/').replace(/~0/g, '~'));
    path += /^\d+$/.test(segment) ? `[${segment}]` : path ? `.${segment}` : segment;
  }
  return path || 'parameters';
}

function valueAt(value: unknown, location: string): unknown {
  let current = value;
  for (const raw of location.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    current = (current as Record<string, unknown> | undefined)?.[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return current;
}

/** The property schema at an instance location (`#/a` → `properties.a`), for the words of a message. */
function schemaAt(schema: ParameterSchema, location: string): Record<string, unknown> | undefined {
  let current: Record<string, unknown> | undefined = schema;
  for (const raw of location.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    const properties: unknown = current?.properties;
    const next: unknown = isPlainObject(properties)
      ? properties[raw]
      : /^\d+$/.test(raw)
        ? current?.items
        : undefined;
    current = isPlainObject(next) ? next : undefined;
  }
  return current;
}

interface SchemaError {
  instanceLocation: string;
  keyword: string;
  keywordLocation: string;
  error: string;
}

/** Keywords that only say "something below failed": dropped when a leaf says what. */
const CONTAINER_KEYWORDS = new Set([
  'properties',
  'items',
  'allOf',
  'anyOf',
  'oneOf',
  'additionalItems',
  'prefixItems',
]);

/** The property name a `required`/`additionalProperties` error quotes, under its parent's path. */
function quotedName(error: SchemaError): string | undefined {
  const name = /"([^"]+)"/.exec(error.error)?.[1];
  if (name === undefined) return undefined;
  const at = pathOf(error.instanceLocation);
  return at === 'parameters' ? name : `${at}.${name}`;
}

/** One failed rule in words an agent can act on. */
function describeError(e: SchemaError, schema: ParameterSchema, params: Record<string, unknown>): string {
  const at = pathOf(e.instanceLocation);
  const value = JSON.stringify(valueAt(params, e.instanceLocation));
  const rule = schemaAt(schema, e.instanceLocation);
  switch (e.keyword) {
    case 'required': {
      const name = quotedName(e);
      if (name) return `${name} is required`;
      break;
    }
    case 'type': {
      const expected = /Expected "([^"]+)"/.exec(e.error)?.[1];
      if (expected)
        return `${at} must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}, got ${value}`;
      break;
    }
    case 'enum':
      if (Array.isArray(rule?.enum))
        return `${at} must be one of ${rule.enum.map((v) => JSON.stringify(v)).join(', ')}, got ${value}`;
      break;
    case 'minimum':
    case 'maximum':
      if (rule?.[e.keyword] !== undefined)
        return `${at} must be ${e.keyword === 'minimum' ? '≥' : '≤'} ${rule[e.keyword]}, got ${value}`;
      break;
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = quotedName(e);
      if (name) return `Unknown parameter: ${name}`;
      break;
    }
  }
  return `${at}: ${e.error.replace(/\.$/, '')}`;
}

/**
 * The problems, one message each. A name with aliases is required as `anyOf: [{required: [path]},
 * {required: [file_path]}]`: when no alternative holds, that is one problem, "path or file_path
 * is required".
 */
function problemsOf(
  errors: SchemaError[],
  schema: ParameterSchema,
  params: Record<string, unknown>,
): string[] {
  const leaves = errors.filter((e) => !CONTAINER_KEYWORDS.has(e.keyword));
  const alternatives = new Map<string, string[]>();
  const problems: string[] = [];
  for (const e of leaves.length ? leaves : errors) {
    const choice = /^(.*)\/(?:anyOf|oneOf)\/\d+\/required$/.exec(e.keywordLocation);
    const name = e.keyword === 'required' ? quotedName(e) : undefined;
    if (choice && name) {
      const key = `${e.instanceLocation} ${choice[1]}`;
      alternatives.set(key, [...(alternatives.get(key) ?? []), name]);
    } else problems.push(describeError(e, schema, params));
  }
  for (const names of alternatives.values()) problems.push(`${names.join(' or ')} is required`);
  return [...new Set(problems)];
}

/**
 * Checks a call's parameters against the tool's declared schema before anything runs; throws
 * one VALIDATION error listing every problem and what the tool expects. A tool without a
 * schema accepts anything (as the original did).
 */
export async function checkToolParameters(
  toolId: string,
  metadata: Pick<ToolMetadata, 'configSchema' | 'fields'>,
  params: Record<string, unknown>,
): Promise<void> {
  const schema = toolParameterSchema(metadata);
  if (!schema) return;
  const given = forSchema(schema, params);
  let validator: SchemaValidator;
  try {
    validator = await validatorFor(schema);
  } catch (cause) {
    throw new RyeError(
      'CONFIG',
      `Tool '${toolId}' declares a parameter schema that cannot be used: ${(cause as Error).message}`,
      { hint: "Fix the tool's CONFIG_SCHEMA (a JSON Schema object), then sign it again.", cause },
    );
  }
  let result: ReturnType<SchemaValidator['validate']>;
  try {
    result = validator.validate(given);
  } catch (cause) {
    // The schema compiled; what fails is the caller's value (e.g. a key that is not well-formed text).
    throw new RyeError('VALIDATION', `Invalid parameters for tool:${toolId}: ${(cause as Error).message}`, {
      hint: 'Pass parameters as a JSON object with plain text keys.',
      cause,
    });
  }
  if (result.valid) return;
  const problems = problemsOf(result.errors, schema, given);
  const expected = Object.entries(parameterSummary(schema)).map(([name, line]) => `${name}: ${line}`);
  throw new RyeError('VALIDATION', `Invalid parameters for tool:${toolId}: ${problems.join('; ')}`, {
    hint: expected.length
      ? `Expected parameters: ${expected.join('; ')}`
      : `Check the tool's parameter schema: load tool:${toolId}.`,
    ...(expected.length ? {} : { fix: { action: 'load', ref: `tool:${toolId}` } as const }),
    details: { problems, parameters: parameterSummary(schema) },
  });
}
