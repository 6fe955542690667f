/**
 * `thread.json` (spec threads §10.1): a thread's identity, limits, capabilities, cost and outputs,
 * signed in an `_signature` field and written atomically. The signature covers the canonical JSON
 * of everything else, so it survives re-indentation but not a changed value.
 */
import { join } from 'node:path';
import { isRyeError, RyeError, sha256Hex, writeFileAtomic } from '@ryeos/lillux';
import type { ThreadCost, ThreadStatus } from '../store/types.js';
import { canonicalJson } from './canonical-json.js';
import { readRegularFile, THREAD_JSON_MAX_BYTES } from './regular-file.js';
import type { Signer, Trust } from './signer.js';
import { checkSignature, signedAt } from './signer.js';

export const THREAD_JSON = 'thread.json';

/** The limits a thread ran under (spec §3), as resolved; `spend_currency` is informative. */
export interface ThreadJsonLimits {
  turns?: number;
  tokens?: number;
  spend?: number;
  spawns?: number;
  depth?: number;
  duration_seconds?: number;
  spend_currency?: string;
}

export interface ThreadJson {
  thread_id: string;
  directive: string;
  status: ThreadStatus;
  /** ISO 8601 with offset, e.g. `2026-02-17T10:00:56+00:00`. */
  created_at: string;
  updated_at: string;
  model: string;
  limits: ThreadJsonLimits;
  capabilities: string[];
  /** TS addition: the inputs the directive ran with (resume re-uses them). */
  inputs?: Record<string, unknown>;
  cost: ThreadCost;
  outputs?: Record<string, unknown>;
  parent_thread_id?: string;
  previous_thread_id?: string;
  /** Set when the thread handed off or was resumed: the thread that carries on. */
  continuation_thread_id?: string;
  error?: string;
  /** `rye:signed:<ts>:<sha256 hex>:<ed25519 base64url>:<fp16>`. */
  _signature?: string;
}

export interface ThreadJsonVerification {
  valid: boolean;
  /** Why it is invalid, in a sentence. */
  error?: string;
}

const OPTIONAL_KEYS = [
  'inputs',
  'outputs',
  'parent_thread_id',
  'previous_thread_id',
  'continuation_thread_id',
  'error',
] as const;

const SIGNATURE =
  /^rye:signed:(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z):([a-f0-9]{64}):([A-Za-z0-9_-]+={0,2}):([a-f0-9]{16})$/;

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** The signed content: everything but `_signature`, empty optional keys left out. */
function unsignedPart(data: ThreadJson): Record<string, unknown> {
  const { _signature: _, ...rest } = data;
  const record: Record<string, unknown> = { ...rest };
  for (const key of OPTIONAL_KEYS) if (isEmpty(record[key])) delete record[key];
  return record;
}

/** sha256 hex of the canonical JSON of `data` without `_signature`. */
export function threadJsonHash(data: ThreadJson | Record<string, unknown>): string {
  const { _signature: _, ...rest } = data as Record<string, unknown>;
  return sha256Hex(canonicalJson(rest));
}

/** Signs and writes `<dir>/thread.json` atomically; returns what was written. */
export async function writeThreadJson(
  dir: string,
  data: ThreadJson,
  signer: Signer,
  options: { now?: Date } = {},
): Promise<ThreadJson> {
  const content = unsignedPart(data);
  const hash = sha256Hex(canonicalJson(content));
  const { sig, fp } = signer.sign(hash);
  const signed = { ...content, _signature: `rye:signed:${signedAt(options.now)}:${hash}:${sig}:${fp}` };
  await writeFileAtomic(join(dir, THREAD_JSON), `${JSON.stringify(signed, null, 2)}\n`, {
    mkdirs: true,
    mode: 0o600,
    dirMode: 0o700,
  });
  return signed as ThreadJson;
}

/** Verifies parsed thread.json data: recorded hash, trusted fingerprint, Ed25519 signature. */
export function verifyThreadJson(data: Record<string, unknown>, trust: Trust): ThreadJsonVerification {
  const signature = data._signature;
  if (signature === undefined) return { valid: false, error: 'thread.json is unsigned (no _signature)' };
  const match = typeof signature === 'string' ? SIGNATURE.exec(signature) : null;
  if (!match) {
    return {
      valid: false,
      error: 'thread.json has a malformed _signature (expected rye:signed:<ts>:<hash>:<sig>:<fp>)',
    };
  }
  const [, , recorded, sig, fp] = match as unknown as [string, string, string, string, string];
  const actual = threadJsonHash(data);
  if (actual !== recorded) {
    return {
      valid: false,
      error: `thread.json was modified after signing (signed hash ${recorded.slice(0, 16)}…, content hash ${actual.slice(0, 16)}…)`,
    };
  }
  const check = checkSignature(recorded, sig, fp, trust);
  return check.ok ? { valid: true } : { valid: false, error: `thread.json is ${check.reason}` };
}

/**
 * Reads and verifies `<dir>/thread.json`. A missing file is NOT_FOUND and text that is not a
 * JSON object is INTEGRITY (there is no data to return); a signature problem is reported in
 * `verification`, so a caller can still show what the file says.
 */
export async function readThreadJson(
  dir: string,
  trust: Trust,
): Promise<{ data: ThreadJson; verification: ThreadJsonVerification }> {
  const path = join(dir, THREAD_JSON);
  let bytes: Buffer | undefined;
  let cause: unknown;
  try {
    bytes = readRegularFile(path, THREAD_JSON_MAX_BYTES);
  } catch (error) {
    // A link, special file or oversized record is refused as such, not reported missing.
    if (isRyeError(error)) throw error;
    cause = error;
  }
  if (bytes === undefined) {
    throw new RyeError('NOT_FOUND', `No thread.json at ${path}`, {
      cause,
      hint: "Check the thread id among the project's threads, or whether the thread was created in another project.",
      fix: { action: 'list_threads' },
      details: { path },
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new RyeError('INTEGRITY', `${path} is not valid JSON: ${(cause as Error).message}`, {
      cause,
      hint: 'The file was damaged or edited by hand; its signature cannot be checked.',
      details: { path },
    });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new RyeError('INTEGRITY', `${path} is not a JSON object`, { details: { path } });
  }
  return {
    data: data as ThreadJson,
    verification: verifyThreadJson(data as Record<string, unknown>, trust),
  };
}
