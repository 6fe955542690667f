/**
 * JSON Schema validation with messages a person can act on (`parameters.timeout: must be integer`).
 * ajv is loaded on first use, not at import, and compiled validators are cached per schema.
 */
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { RyeError } from './errors.js';

export type JsonSchema = Record<string, unknown> | boolean;

/** One failed rule, structured for callers that word their own messages. */
export interface SchemaIssue {
  /** Property names and array indices from the root to the failing value. */
  path: string[];
  /** The JSON Schema keyword that failed (`type`, `enum`, `required`, `additionalProperties`, …). */
  keyword: string;
  params: Record<string, unknown>;
}

export interface SchemaValidationResult {
  valid: boolean;
  errors: string[];
  issues: SchemaIssue[];
}

export interface ValidateOptions {
  /** Name of the value in messages, e.g. `parameters`. */
  root?: string;
}

interface AjvInstance {
  compile(schema: JsonSchema): ValidateFunction;
}

let ajv: AjvInstance | undefined;
const compiled = new WeakMap<object, ValidateFunction>();
const compiledByText = new Map<string, ValidateFunction>();

function getAjv(): AjvInstance {
  if (!ajv) {
    const require = createRequire(import.meta.url);
    const Ajv = require('ajv') as new (options: Record<string, unknown>) => AjvInstance;
    ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
  }
  return ajv;
}

function compile(schema: JsonSchema): ValidateFunction {
  if (typeof schema === 'object') {
    const cached = compiled.get(schema);
    if (cached) return cached;
  }
  const text = JSON.stringify(schema);
  let validate = compiledByText.get(text);
  if (!validate) {
    try {
      validate = getAjv().compile(schema);
    } catch (cause) {
      throw new RyeError('VALIDATION', `Invalid JSON Schema: ${(cause as Error).message}`, {
        cause,
        hint: 'Fix the schema (see https://json-schema.org) and try again.',
      });
    }
    compiledByText.set(text, validate);
  }
  if (typeof schema === 'object') compiled.set(schema, validate);
  return validate;
}

function pathOf(root: string, instancePath: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = root;
  for (const segment of segments) {
    path += /^\d+$/.test(segment) ? `[${segment}]` : path ? `.${segment}` : segment;
  }
  return path || '(value)';
}

function describe(error: ErrorObject, root: string): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${pathOf(root, `${error.instancePath}/${String(params.missingProperty)}`)}: is required`;
    case 'additionalProperties':
      return `${pathOf(root, `${error.instancePath}/${String(params.additionalProperty)}`)}: is not allowed (unknown property)`;
    case 'enum':
      return `${pathOf(root, error.instancePath)}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `${pathOf(root, error.instancePath)}: must be ${String(params.type)}`;
    default:
      return `${pathOf(root, error.instancePath)}: ${error.message ?? 'is invalid'}`;
  }
}

/** ajv's errors (also those of validators compiled ahead of time) as structured issues. */
export function schemaIssues(errors: readonly ErrorObject[]): SchemaIssue[] {
  return errors.map((e) => ({
    path: e.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
    keyword: e.keyword,
    params: e.params as Record<string, unknown>,
  }));
}

/** Validates a value against a JSON Schema; never throws for invalid data. */
export function validateSchema(
  schema: JsonSchema,
  value: unknown,
  options: ValidateOptions = {},
): SchemaValidationResult {
  const validate = compile(schema);
  if (validate(value)) return { valid: true, errors: [], issues: [] };
  const root = options.root ?? '';
  const raw = validate.errors ?? [];
  const errors = [...new Set(raw.map((e) => describe(e, root)))];
  return { valid: false, errors, issues: schemaIssues(raw) };
}
