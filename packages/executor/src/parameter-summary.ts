/**
 * A tool's parameters in a few words each, for search results, `load` and validation errors: an
 * agent learns how to call a tool without reading its source. The schema is what the tool
 * declares (`toolParameterSchema` in tool-parameters.ts).
 *
 * One line per parameter, required ones first: `{path: "string, required — File to read"}`, the
 * form a parameter validation error uses too; `required unless file_path is given` for a choice
 * declared as `anyOf`/`oneOf` of `required` lists. Long descriptions and enums are cut short.
 */

const MAX_DESCRIPTION = 120;
const MAX_ENUM = 10;
const MAX_DEFAULT = 40;

import { clipText } from '@ryeos/lillux';
import { isPlainObject } from './plain-object.js';

/** A tool's parameters as JSON Schema (what `toolParameterSchema` in tool-parameters.ts returns). */
export type ParameterSchema = Record<string, unknown> & {
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
};

type Schema = Record<string, unknown>;

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${clipText(flat, max - 1).trimEnd()}…` : flat;
}

interface Declared {
  properties: Record<string, Schema>;
  required: string[];
  /** Parameters required in the alternative (`anyOf`/`oneOf` of `required` lists): name → the others. */
  alternatives: Map<string, string[]>;
}

function names(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}

/** `anyOf: [{required: [path]}, {required: [file_path]}]`: path or file_path is required. */
function alternativesOf(schema: Schema): Map<string, string[]> {
  const alternatives = new Map<string, string[]>();
  for (const key of ['anyOf', 'oneOf']) {
    const branches = schema[key];
    if (!Array.isArray(branches) || branches.length < 2) continue;
    const groups = branches.map((branch) => (isPlainObject(branch) ? names(branch.required) : []));
    if (groups.some((group) => group.length === 0)) continue;
    for (const group of groups) {
      const others = groups.filter((g) => g !== group).flat();
      for (const name of group)
        alternatives.set(name, [...new Set(others.filter((o) => !group.includes(o)))]);
    }
  }
  return alternatives;
}

function declared(schema: ParameterSchema): Declared {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  return {
    // fromEntries: a parameter named `__proto__` stays a plain key.
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, rule]) => [name, isPlainObject(rule) ? rule : {}]),
    ),
    required: names(schema.required),
    alternatives: alternativesOf(schema),
  };
}

/** One parameter: `string, required, one of "a", "b", default 3 — What it is`. */
function describe(schema: Schema, required: boolean, alternatives: string[] | undefined): string {
  const type = Array.isArray(schema.type) ? schema.type.join('|') : schema.type;
  const traits: string[] = [typeof type === 'string' ? type : 'any'];
  if (required) traits.push('required');
  else if (alternatives?.length) traits.push(`required unless ${alternatives.join(' or ')} is given`);
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.slice(0, MAX_ENUM).map((v) => JSON.stringify(v));
    if (schema.enum.length > MAX_ENUM) values.push('…');
    traits.push(`one of ${values.join(', ')}`);
  }
  if (schema.default !== undefined) {
    traits.push(`default ${cut(JSON.stringify(schema.default) ?? String(schema.default), MAX_DEFAULT)}`);
  }
  const description = typeof schema.description === 'string' ? cut(schema.description, MAX_DESCRIPTION) : '';
  return description ? `${traits.join(', ')} — ${description}` : traits.join(', ');
}

/**
 * The compact summary of a tool's declared parameters (required first, then as declared), `{}`
 * for a tool that declares it takes none; read `toolParameterSchema` for what a tool declares.
 */
export function parameterSummary(schema: ParameterSchema): Record<string, string> {
  const { properties, required: requiredNames, alternatives } = declared(schema);
  const required = new Set(requiredNames);
  const first = (name: string) => required.has(name) || alternatives.has(name);
  const all = Object.keys(properties);
  const ordered = [...all.filter(first), ...all.filter((name) => !first(name))];
  return Object.fromEntries(
    ordered.map((name) => [name, describe(properties[name]!, required.has(name), alternatives.get(name))]),
  );
}
