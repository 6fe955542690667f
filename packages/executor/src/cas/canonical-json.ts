/**
 * Canonical JSON: the one text an object hashes to, so two machines that build the same object
 * agree on its hash. Keys sorted, no whitespace (`,` and `:`), every non-ASCII character written
 * as `\uXXXX` (as Python's `json.dumps(sort_keys=True, separators=(",", ":"))` does, so stores
 * written by the original RYE hash the same).
 */
import { RyeError } from '@ryeos/lillux';

/** Deeper than this, an object is refused: the writer recurses, and a client sends the objects. */
const MAX_DEPTH = 1000;

export function canonicalJson(value: unknown): string {
  return write(value, '$', 0);
}

function write(value: unknown, at: string, depth: number): string {
  if (value === null) return 'null';
  if (depth > MAX_DEPTH && typeof value === 'object') throw tooDeep(at);
  switch (typeof value) {
    case 'string':
      return asciiString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw unsupported(at, String(value));
      return JSON.stringify(value);
    case 'object':
      if (Array.isArray(value))
        return `[${value.map((entry, index) => write(entry ?? null, `${at}[${index}]`, depth + 1)).join(',')}]`;
      return writeObject(value as Record<string, unknown>, at, depth);
    default:
      throw unsupported(at, typeof value);
  }
}

function writeObject(value: Record<string, unknown>, at: string, depth: number): string {
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const entry = value[key];
    // As JSON.stringify does: an undefined member is simply not there.
    if (entry === undefined) continue;
    parts.push(`${asciiString(key)}:${write(entry, `${at}.${key}`, depth + 1)}`);
  }
  return `{${parts.join(',')}}`;
}

function asciiString(text: string): string {
  return JSON.stringify(text).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function tooDeep(at: string): RyeError {
  return new RyeError(
    'VALIDATION',
    `An object nests deeper than ${MAX_DEPTH} levels (at ${at.slice(0, 120)}…)`,
    {
      hint: `Objects hold JSON nested at most ${MAX_DEPTH} levels deep; flatten the data.`,
    },
  );
}

function unsupported(at: string, what: string): RyeError {
  return new RyeError('VALIDATION', `Cannot store ${what} at ${at} in a content-addressed object`, {
    hint: 'Objects hold JSON only: strings, finite numbers, booleans, null, arrays and plain objects.',
  });
}
