/**
 * The template passes over a chain's merged config (spec items §4.5): `${VAR}` from the merged
 * environment, then `{name}` placeholders. Only the chain's own config is a template: caller
 * parameters and substituted values are never rescanned (so a parameter containing
 * `{tool_path}` or `${HOME}` reaches the tool verbatim), and no value is shell-quoted.
 */
import { expandEnvTemplate } from '@ryeos/lillux';

function mapStrings(value: unknown, fn: (text: string) => unknown): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, fn));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  }
  return value;
}

export function expandEnvInConfig<T>(config: T, env: Record<string, string | undefined>): T {
  return mapStrings(config, (text) => expandEnvTemplate(text, env)) as T;
}

const LONE = /^\{(\w+)\}$/;
const PLACEHOLDER = /\{(\w+)\}/g;
const MAX_DEPTH = 3;

function stringForm(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export interface PlaceholderSources {
  /** Values that win over everything (anchor variables, params, params_json). */
  fixed: Record<string, unknown>;
  /** Caller parameters: usable as placeholders, never rewritten themselves. */
  params: Record<string, unknown>;
}

/**
 * Renders `{name}` in the chain config. A name resolves from `fixed`, then `params`, then the
 * config's own keys (whose templates are rendered recursively, up to 3 levels). A string that is
 * exactly one placeholder takes the typed value; unknown placeholders stay verbatim.
 */
export function renderPlaceholders(
  config: Record<string, unknown>,
  sources: PlaceholderSources,
): Record<string, unknown> {
  const memo = new Map<string, unknown>();
  const lookup = (name: string, depth: number): { found: boolean; value?: unknown } => {
    if (Object.hasOwn(sources.fixed, name) && sources.fixed[name] !== undefined)
      return { found: true, value: sources.fixed[name] };
    if (Object.hasOwn(sources.params, name) && sources.params[name] !== undefined)
      return { found: true, value: sources.params[name] };
    if (!Object.hasOwn(config, name) || config[name] === undefined) return { found: false };
    if (depth >= MAX_DEPTH) return { found: true, value: config[name] };
    if (!memo.has(name)) memo.set(name, render(config[name], depth + 1));
    return { found: true, value: memo.get(name) };
  };
  const render = (value: unknown, depth: number): unknown =>
    mapStrings(value, (text) => {
      if (!text.includes('{')) return text;
      const lone = LONE.exec(text);
      if (lone) {
        const hit = lookup(lone[1]!, depth);
        return hit.found ? hit.value : text;
      }
      return text.replace(PLACEHOLDER, (match, name: string) => {
        const hit = lookup(name, depth);
        return hit.found ? stringForm(hit.value) : match;
      });
    });
  return Object.fromEntries(Object.entries(config).map(([key, value]) => [key, render(value, 0)]));
}

/** Fills `{name}` in one string from a flat map (anchor templates such as `{anchor_path}/lib`). */
export function fillTemplate(text: string, vars: Record<string, unknown>): string {
  return stringForm(renderPlaceholders({ value: text }, { fixed: vars, params: {} }).value);
}
