/**
 * Where a caller's value may sit in a signed tool's URL: in its path or query only. A caller value
 * in the scheme, host or port would choose where the request, and the credentials it carries, go.
 */
import { RyeError } from '@ryeos/lillux';

const PLACEHOLDER = /\{(\w+)\}/g;

/** The end of the URL's scheme and authority in a template: the first `/`, `?` or `#` after `://`. */
function authorityEnd(template: string): number {
  const schemeEnd = template.indexOf('://');
  const from = schemeEnd === -1 ? 0 : schemeEnd + 3;
  const rest = template.slice(from).search(/[/?#]/);
  return rest === -1 ? template.length : from + rest;
}

/** The caller parameters a `{name}` in `text` takes its value from, through the config's own keys too. */
function callerNamesIn(
  text: string,
  sources: {
    fixed: Record<string, unknown>;
    params: Record<string, unknown>;
    config: Record<string, unknown>;
  },
  seen: Set<string>,
  into: Set<string>,
): void {
  for (const [, name] of text.matchAll(PLACEHOLDER)) {
    if (seen.has(name!)) continue;
    seen.add(name!);
    if (sources.fixed[name!] !== undefined) continue;
    if (sources.params[name!] !== undefined) into.add(name!);
    else if (typeof sources.config[name!] === 'string')
      callerNamesIn(sources.config[name!] as string, sources, seen, into);
  }
}

/** Refuses a caller's parameter that would fill the scheme, host or port of the tool's `url`. */
export function refuseCallerValuesInUrlHost(
  url: string,
  sources: {
    fixed: Record<string, unknown>;
    params: Record<string, unknown>;
    config: Record<string, unknown>;
  },
): void {
  const names = new Set<string>();
  callerNamesIn(url.slice(0, authorityEnd(url)), sources, new Set(), names);
  const [name] = names;
  if (name === undefined) return;
  throw new RyeError('VALIDATION', `Parameter '${name}' would choose the host of ${url}`, {
    hint: `A caller's value may only fill the URL's path or query: the signed tool config must name the scheme, host and port itself (move '{${name}}' after the host and re-sign).`,
  });
}
