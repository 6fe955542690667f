/**
 * Directive inputs (spec items §7.3): validation with defaults, then interpolation of
 * `{input:k}`, `{input:k?}`, `{input:k:default}`, `{input:k|default}`, `${inputs.k}`,
 * `{env:VAR}` and `{env:VAR:default}` in one left-to-right pass, so no substituted value is
 * ever scanned again (a value containing `{input:x}` reaches the text verbatim).
 */
import { RyeError } from '@ryeos/lillux';
import type { DirectiveAction, DirectiveInput } from './directive.js';

export type Inputs = Record<string, unknown>;

/** Top-level execute options that upstream read from `parameters` (accepted there too). */
const EXECUTE_OPTIONS = ['model', 'limit_overrides'];

export class InputError extends RyeError {
  constructor(
    message: string,
    readonly declaredInputs: DirectiveInput[],
  ) {
    super('VALIDATION', message, {
      hint: declaredInputs.length
        ? `Valid inputs: ${declaredInputs.map((i) => `${i.name}${i.required ? ' (required)' : ''}`).join(', ')}`
        : 'This directive declares no inputs.',
      details: { declared_inputs: declaredInputs },
    });
  }
}

/**
 * Applies defaults and checks the parameters against the declared inputs: a parameter no input
 * declares is refused, also when the directive declares none. `model`/`limit_overrides` are
 * execute options unless the directive declares inputs of those names.
 */
export function validateInputs(declared: DirectiveInput[], parameters: Inputs): Inputs {
  const names = new Set(declared.map((i) => i.name));
  const given = Object.fromEntries(
    Object.entries(parameters).filter(([k]) => names.has(k) || !EXECUTE_OPTIONS.includes(k)),
  );
  // A key no input declares is a caller's mistake (a typo, the wrong directive), as it is for a
  // tool: naming it lets an agent correct the call instead of following directions without it.
  const unknown = Object.keys(given).filter((k) => !names.has(k));
  if (unknown.length) {
    const valid = declared.length
      ? `Valid inputs: ${declared.map((i) => i.name).join(', ')}`
      : 'This directive declares no inputs';
    throw new InputError(`Unknown parameters: ${unknown.join(', ')}. ${valid}`, declared);
  }
  const inputs: Inputs = { ...given };
  for (const input of declared) {
    if (!(input.name in inputs) && input.default !== undefined) inputs[input.name] = input.default;
  }
  const missing = declared.filter((i) => i.required && !(i.name in inputs)).map((i) => i.name);
  if (missing.length) throw new InputError(`Missing required inputs: ${missing.join(', ')}`, declared);
  const wrong: string[] = [];
  for (const input of declared) {
    if (!(input.name in inputs) || inputs[input.name] === null) continue; // null counts as present
    const checked = checkType(input.type, inputs[input.name]);
    if (checked.ok) inputs[input.name] = checked.value;
    else wrong.push(`${input.name} must be ${checked.expected}, got ${JSON.stringify(inputs[input.name])}`);
  }
  if (wrong.length) throw new InputError(`Invalid inputs: ${wrong.join('; ')}`, declared);
  return inputs;
}

export type TypeCheck = { ok: true; value: unknown } | { ok: false; expected: string };

/**
 * A value against an input's declared `type`. Numbers and booleans may come as their text (the
 * form defaults and CLI values take) and are converted; a string input takes only a string.
 * Types ryeos does not know (e.g. `path`) are not checked. Inputs and returned outputs share it.
 */
export function checkType(type: string, value: unknown): TypeCheck {
  switch (type.toLowerCase()) {
    case 'string':
      return typeof value === 'string' ? { ok: true, value } : { ok: false, expected: 'a string' };
    case 'integer':
    case 'int': {
      const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
      return Number.isInteger(n) ? { ok: true, value: n } : { ok: false, expected: 'an integer' };
    }
    case 'number':
    case 'float': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      return typeof n === 'number' && Number.isFinite(n)
        ? { ok: true, value: n }
        : { ok: false, expected: 'a number' };
    }
    case 'boolean':
    case 'bool': {
      const b = value === 'true' ? true : value === 'false' ? false : value;
      return typeof b === 'boolean'
        ? { ok: true, value: b }
        : { ok: false, expected: 'a boolean (true or false)' };
    }
    case 'object':
    case 'dict':
      return value && typeof value === 'object' && !Array.isArray(value)
        ? { ok: true, value }
        : { ok: false, expected: 'an object' };
    case 'array':
    case 'list':
      return Array.isArray(value) ? { ok: true, value } : { ok: false, expected: 'an array' };
    default:
      return { ok: true, value };
  }
}

const PLACEHOLDERS = /\{env:(\w+)(?::([^}]*))?\}|\{input:(\w+)(\?|[:|][^}]*)?\}|\$\{inputs\.(\w+)\}/g;

function render(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export interface InterpolateOptions {
  env?: Record<string, string | undefined>;
  /** Resolve `{env:…}` (default true; actions only get input refs). */
  envRefs?: boolean;
}

export function interpolate(text: string, inputs: Inputs, options: InterpolateOptions = {}): string {
  const env = options.env ?? {};
  const envRefs = options.envRefs !== false;
  return text.replace(
    PLACEHOLDERS,
    (match, envName?: string, envDefault?: string, key?: string, modifier?: string, dollarKey?: string) => {
      if (envName !== undefined) {
        if (!envRefs) return match;
        const value = env[envName];
        if (value !== undefined) return value;
        return envDefault !== undefined ? envDefault : match;
      }
      if (key !== undefined) {
        if (Object.hasOwn(inputs, key) && inputs[key] !== undefined) return render(inputs[key]);
        if (modifier === '?') return '';
        if (modifier) return modifier.slice(1);
        return match;
      }
      if (dollarKey !== undefined && Object.hasOwn(inputs, dollarKey) && inputs[dollarKey] !== undefined) {
        return render(inputs[dollarKey]);
      }
      return match;
    },
  );
}

/** Interpolates string attributes and params of actions (input refs only). */
export function interpolateActions(actions: DirectiveAction[], inputs: Inputs): DirectiveAction[] {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return interpolate(value, inputs, { envRefs: false });
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  return walk(actions) as DirectiveAction[];
}
