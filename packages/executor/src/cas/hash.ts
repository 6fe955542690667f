/** The one hash of the content-addressed store (and of run snapshots): SHA-256, lowercase hex. */
import { createHash } from 'node:crypto';
import { RyeError } from '@ryeos/lillux';
import { canonicalJson } from './canonical-json.js';

const HASH = /^[0-9a-f]{64}$/;

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The hash of a JSON object: SHA-256 of its canonical JSON. */
export function objectHashOf(value: object): string {
  return sha256Hex(canonicalJson(value));
}

export function isHash(value: unknown): value is string {
  return typeof value === 'string' && HASH.test(value);
}

/** Hashes become file names: anything but 64 lowercase hex digits is refused before a path is built. */
export function assertHash(value: unknown, what = 'hash'): string {
  if (isHash(value)) return value;
  throw new RyeError('VALIDATION', `Invalid ${what}: ${JSON.stringify(value)?.slice(0, 80)}`, {
    hint: 'A hash is a SHA-256 digest written as 64 lowercase hexadecimal characters.',
  });
}
