/**
 * Canonical JSON for signing `thread.json` (spec threads §10.1): the bytes Python writes with
 * `json.dumps(data, sort_keys=True, separators=(',', ':'), ensure_ascii=True)`: keys sorted
 * recursively, no spaces, every character outside printable ASCII as `\uXXXX`, numbers as JS
 * prints them (Python prints `1.0` where JS prints `1`; only self-consistency is required).
 *
 * Hand-written rather than `canonicalize` (RFC 8785): RFC 8785 writes non-ASCII as raw UTF-8 and
 * sorts keys by UTF-16 code units, both unlike the reference recipe. With `JSON.stringify` doing
 * the string escaping, what remains is a few lines.
 */
import { RyeError } from '@ryeos/lillux';

/** Code-point order, as Python sorts `str` keys (UTF-16 order differs above U+FFFF). */
function byCodePoint(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const diff = left[i]!.codePointAt(0)! - right[i]!.codePointAt(0)!;
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
}

/** JSON.stringify's string escaping, then `\uXXXX` (lower-case hex) for anything not in 0x20–0x7E. */
function quote(text: string): string {
  return JSON.stringify(text).replace(
    /[^\x20-\x7e]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function write(value: unknown, path: string): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value))
        throw new RyeError('VALIDATION', `Cannot sign ${path}: ${value} is not a JSON number`);
      return JSON.stringify(value);
    case 'undefined':
    case 'function':
    case 'symbol':
      // As JSON.stringify: dropped from objects (null in arrays, see below).
      return undefined;
    case 'bigint':
      throw new RyeError('VALIDATION', `Cannot sign ${path}: a bigint is not a JSON number`);
  }
  if (Array.isArray(value))
    return `[${value.map((item, i) => write(item, `${path}[${i}]`) ?? 'null').join(',')}]`;
  const record = value as Record<string, unknown>;
  if (typeof (record as { toJSON?: unknown }).toJSON === 'function')
    return write((record as { toJSON(): unknown }).toJSON(), path);
  const members: string[] = [];
  for (const key of Object.keys(record).sort(byCodePoint)) {
    const member = write(record[key], `${path}.${key}`);
    if (member !== undefined) members.push(`${quote(key)}:${member}`);
  }
  return `{${members.join(',')}}`;
}

/** The canonical text of a JSON value; throws on values JSON cannot carry (NaN, Infinity, bigint). */
export function canonicalJson(value: unknown): string {
  return write(value, '$') ?? 'null';
}
