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

/** A stand-in for a caller's value that survives URL parsing unchanged (lower case, letters and digits). */
const SLOT = (index: number) => `x0ryeslot${index}x`;

/**
 * The caller parameters that land in the scheme, credentials, host or port when the URL is parsed
 * as the HTTP client will (WHATWG): catches what the text check cannot see, such as a host after
 * one slash (`http:/{h}/x` parses `{h}` as the host).
 */
function hostSlotsAsParsed(
  url: string,
  sources: {
    fixed: Record<string, unknown>;
    params: Record<string, unknown>;
    config: Record<string, unknown>;
  },
): Set<string> {
  const slots: string[] = [];
  const expand = (text: string, depth: number): string =>
    text.replace(PLACEHOLDER, (_whole, name: string) => {
      if (sources.fixed[name] !== undefined) return String(sources.fixed[name]);
      if (sources.params[name] !== undefined) {
        slots.push(name);
        return SLOT(slots.length - 1);
      }
      const own = sources.config[name];
      return typeof own === 'string' && depth < 8 ? expand(own, depth + 1) : 'x';
    });
  const found = new Set<string>();
  let parsed: URL;
  try {
    parsed = new URL(expand(url, 0));
  } catch {
    return found; // Not a URL the client could send either.
  }
  const origin = `${parsed.protocol}${parsed.username}:${parsed.password}@${parsed.host}`;
  slots.forEach((name, index) => {
    if (origin.includes(SLOT(index))) found.add(name);
  });
  return found;
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
  const [name] = names.size ? names : hostSlotsAsParsed(url, sources);
  if (name === undefined) return;
  throw new RyeError('VALIDATION', `Parameter '${name}' would choose the host of ${url}`, {
    hint: `A caller's value may only fill the URL's path or query: the signed tool config must name the scheme, host and port itself (move '{${name}}' after the host and re-sign).`,
  });
}
