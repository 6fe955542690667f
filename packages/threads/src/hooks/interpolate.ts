/**
 * Hook interpolation (spec threads §5.4): `${a.b}`, `${a || b}` (first non-null) and the directive
 * input refs `{input:k}`, `{input:k?}`, `{input:k:def}`, `{input:k|def}` read from
 * `context.inputs`. One left-to-right pass, so a substituted value is never scanned again.
 *
 * A string that is exactly one `${…}` keeps the value's own type (a number stays a number, an
 * object an object, a missing value `null`); embedded in text, null is "" and objects are JSON.
 */
import { resolvePath, valueText } from './conditions.js';
import type { HookAction } from './layers.js';

const PLACEHOLDER = /\$\{([^{}]*)\}|\{input:(\w+)(\?|[:|][^}]*)?\}/g;
const WHOLE = /^\$\{([^{}]*)\}$/;
const QUOTED = /^(['"])(.*)\1$/s;

/** The value of the inside of `${…}`: alternatives separated by `||`, first non-null wins. */
export function evaluateExpression(expression: string, context: unknown): unknown {
  for (const raw of expression.split('||')) {
    const term = raw.trim();
    const quoted = QUOTED.exec(term);
    const value = quoted ? quoted[2] : resolvePath(context, term);
    if (value !== null && value !== undefined) return value;
  }
  return null;
}

function inputsOf(context: unknown): Record<string, unknown> {
  const inputs = resolvePath(context, 'inputs');
  return typeof inputs === 'object' && inputs !== null && !Array.isArray(inputs)
    ? (inputs as Record<string, unknown>)
    : {};
}

function embedded(value: unknown): string {
  return value === null || value === undefined ? '' : valueText(value);
}

/** One string: the raw value for an exact `${…}`, else the text with every placeholder filled. */
export function interpolateString(template: string, context: unknown): unknown {
  const whole = WHOLE.exec(template);
  if (whole) return evaluateExpression(whole[1]!, context);
  if (!template.includes('{')) return template;
  const inputs = inputsOf(context);
  return template.replace(
    PLACEHOLDER,
    (match, expression: string | undefined, key: string | undefined, modifier: string | undefined) => {
      if (expression !== undefined) return embedded(evaluateExpression(expression, context));
      const value = Object.hasOwn(inputs, key!) ? inputs[key!] : undefined;
      if (value !== undefined && value !== null) return valueText(value);
      if (modifier === '?') return '';
      if (modifier) return modifier.slice(1); // `:def` or `|def`
      return match; // a missing required ref stays visible
    },
  );
}

/** Interpolates every string inside `value` (arrays and objects recursively; keys untouched). */
export function interpolate(value: unknown, context: unknown): unknown {
  if (typeof value === 'string') return interpolateString(value, context);
  if (Array.isArray(value)) return value.map((item) => interpolate(item, context));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, {
        value: interpolate(v, context),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** Interpolation that must yield text (an item id, injected content): null is "", objects JSON. */
export function interpolateText(template: string, context: unknown): string {
  return embedded(interpolateString(template, context));
}

/** The interpolated action: `item_id`, `params` and `set_extends` filled from the context. */
export function interpolateAction(action: HookAction, context: unknown): HookAction {
  const out: HookAction = {
    ...action,
    params: interpolate(action.params, context) as Record<string, unknown>,
  };
  if (action.item_id !== undefined) out.item_id = interpolateText(action.item_id, context);
  if (action.set_extends !== undefined) out.set_extends = interpolateText(action.set_extends, context);
  return out;
}
