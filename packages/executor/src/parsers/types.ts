/**
 * Shared types of the static metadata parsers. A parser reads a tool file as text — never executing
 * or importing it — and returns its top-level literal assignments.
 */
import { RyeError } from '@ryeos/lillux';

export interface ParsedMetadata {
  /** Top-level name → literal value (e.g. __version__ → "1.2.0", CONFIG_SCHEMA → {...}). */
  fields: Record<string, unknown>;
  /** Line (1-based) where each field's value was assigned. */
  lines: Record<string, number>;
  /** The module docstring (python only), trimmed. */
  docstring?: string;
}

/** Reads metadata from a tool file's text; throws `MalformedMetadataError`. */
export type MetadataParser = (text: string, path: string) => ParsedMetadata;

/**
 * A known metadata field whose value is not a plain literal of the right type, or a file the parser
 * cannot read at all (field `(file)`).
 */
export class MalformedMetadataError extends RyeError {
  readonly path: string;
  readonly line: number;
  readonly field: string;
  readonly expected: string;

  constructor(
    path: string,
    line: number,
    field: string,
    expected: string,
    hint = 'Make the field a plain literal, then sign the tool again.',
  ) {
    super('VALIDATION', `Malformed metadata in ${path}:${line}: ${field}: ${expected}`, {
      hint,
      details: { path, line, field, expected },
    });
    this.path = path;
    this.line = line;
    this.field = field;
    this.expected = expected;
  }
}

/** Fields whose value must be a literal: a non-literal value for one of these is an error. */
export const KNOWN_METADATA_FIELDS: ReadonlySet<string> = new Set([
  '__version__',
  '__tool_type__',
  '__executor_id__',
  '__category__',
  '__tool_description__',
  '__description__',
  'CONFIG_SCHEMA',
  'ENV_CONFIG',
  'CONFIG',
  'CONFIG_RESOLVE',
]);

export function isKnownMetadataField(name: string): boolean {
  return KNOWN_METADATA_FIELDS.has(name);
}

/** How values are named in messages: Python or JavaScript vocabulary. */
export type ValueDialect = 'python' | 'javascript';

const WORDS = {
  python: { null: 'None', array: 'a list', object: 'a dict' },
  javascript: { null: 'null', array: 'an array', object: 'an object' },
} as const;

/** Names a (parsed) literal value for an error message, e.g. `a number`, `a dict`, `None`. */
export function describeValue(value: unknown, dialect: ValueDialect): string {
  const w = WORDS[dialect];
  if (value === null) return w.null;
  if (Array.isArray(value)) return w.array;
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return w.object;
    default:
      return typeof value;
  }
}

type Kind = 'string' | 'null' | 'array' | 'object';

const FIELD_KINDS: Readonly<Record<string, readonly Kind[]>> = {
  __version__: ['string'],
  __tool_type__: ['string'],
  __category__: ['string'],
  __tool_description__: ['string'],
  __description__: ['string'],
  __executor_id__: ['string', 'null'],
  CONFIG_SCHEMA: ['object'],
  ENV_CONFIG: ['object'],
  CONFIG: ['object'],
  CONFIG_RESOLVE: ['object', 'array'],
};

function kindOf(value: unknown): Kind | undefined {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'object') return 'object';
  return undefined;
}

/**
 * Checks the type of a known field's literal value. Returns the `expected …, got …` text when the
 * type is wrong, `undefined` when it is fine (or the field has no type rule).
 */
export function checkFieldType(field: string, value: unknown, dialect: ValueDialect): string | undefined {
  const kinds = Object.hasOwn(FIELD_KINDS, field) ? FIELD_KINDS[field] : undefined;
  if (kinds === undefined) return undefined;
  const kind = kindOf(value);
  if (kind !== undefined && kinds.includes(kind)) return undefined;
  const w = WORDS[dialect];
  const names = kinds.map((k) => (k === 'string' ? 'a string' : w[k]));
  return `expected ${names.join(' or ')}, got ${describeValue(value, dialect)}`;
}

/** Sets `obj[key] = value` as an own data property, even for `__proto__`. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Records one top-level assignment (last assignment wins). */
export function assignField(result: ParsedMetadata, name: string, value: unknown, line: number): void {
  setOwn(result.fields, name, value);
  setOwn(result.lines, name, line);
}
