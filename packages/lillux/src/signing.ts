/**
 * Ed25519 keys, fingerprints and signature lines.
 *
 * We use `node:crypto` (OpenSSL) rather than a JavaScript Ed25519: it is an order of magnitude
 * faster for verify, and its PEM export is byte-identical to the original RYE key files, which
 * the fingerprint (a hash of the PEM text) depends on.
 */

import type { KeyObject } from 'node:crypto';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
} from 'node:crypto';
import { RyeError } from './errors.js';

export interface KeyPairPem {
  privateKeyPem: string;
  publicKeyPem: string;
}

/** Comment syntax of a signature line for one file type (from the extractor data). */
export interface SignatureFormat {
  prefix: string;
  suffix?: string;
  /** When true and line 1 is a `#!` shebang, the signature sits on line 2. */
  afterShebang?: boolean;
}

export interface SignatureFields {
  timestamp: string;
  hash: string;
  signature: string;
  fingerprint: string;
  /** Optional registry provenance `provider@user`. */
  provenance?: string;
}

export interface LocatedSignature extends SignatureFields {
  /** Zero-based line index of the signature line (0, or 1 after a shebang). */
  lineIndex: number;
  line: string;
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function generateKeyPair(): KeyPairPem {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return toPem(privateKey, publicKey);
}

/** Deterministic key pair from a 32-byte seed (used by test vectors and fixtures). */
export function keyPairFromSeed(seed: Uint8Array): KeyPairPem {
  if (seed.length !== 32)
    throw new RyeError('VALIDATION', `Ed25519 seed must be 32 bytes, got ${seed.length}`);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  return toPem(privateKey, createPublicKey(privateKey));
}

export function publicKeyFromPrivate(privateKeyPem: string): string {
  return createPublicKey(privateKeyCache(privateKeyPem)).export({ type: 'spki', format: 'pem' }).toString();
}

function toPem(privateKey: KeyObject, publicKey: KeyObject): KeyPairPem {
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** First 16 hex chars of SHA-256 over the public PEM text exactly as stored (trailing newline included). */
export function fingerprint(publicKeyPem: string): string {
  return createHash('sha256').update(publicKeyPem, 'utf8').digest('hex').slice(0, 16);
}

// Parsing a PEM costs more than an Ed25519 verify; keys repeat, so keep the parsed objects.
const privateKeys = new Map<string, KeyObject>();
const publicKeys = new Map<string, KeyObject>();

function privateKeyCache(pem: string): KeyObject {
  let key = privateKeys.get(pem);
  if (!key) {
    try {
      key = createPrivateKey(pem);
    } catch (cause) {
      throw new RyeError('VALIDATION', 'Invalid Ed25519 private key PEM', {
        cause,
        hint: 'The private key file is damaged: restore it from a backup, or replace the key pair with a new one.',
        fix: { action: 'generate_key', force: true },
      });
    }
    privateKeys.set(pem, key);
  }
  return key;
}

function publicKeyCache(pem: string): KeyObject | undefined {
  let key = publicKeys.get(pem);
  if (!key) {
    try {
      key = createPublicKey(pem);
    } catch {
      return undefined;
    }
    publicKeys.set(pem, key);
  }
  return key;
}

/** Signs the 64 ASCII bytes of a hex hash (not the raw digest), as the original RYE does. */
export function signHash(hashHex: string, privateKeyPem: string): string {
  const signature = sign(null, Buffer.from(hashHex, 'ascii'), privateKeyCache(privateKeyPem));
  return signature.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

// Verification is a pure function of (key, hash, signature): remembering results is safe and
// saves ~0.1 ms per chain element on every run of the same tool.
const verified = new Map<string, boolean>();
const VERIFIED_LIMIT = 4_096;

export function verifyHashSignature(hashHex: string, signatureB64Url: string, publicKeyPem: string): boolean {
  const cacheKey = `${publicKeyPem}\u0000${hashHex}\u0000${signatureB64Url}`;
  const known = verified.get(cacheKey);
  if (known !== undefined) return known;
  const result = verifyUncached(hashHex, signatureB64Url, publicKeyPem);
  if (verified.size >= VERIFIED_LIMIT) verified.delete(verified.keys().next().value!);
  verified.set(cacheKey, result);
  return result;
}

function verifyUncached(hashHex: string, signatureB64Url: string, publicKeyPem: string): boolean {
  const key = publicKeyCache(publicKeyPem);
  if (!key) return false;
  const bytes = Buffer.from(signatureB64Url.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 64) return false;
  try {
    return verify(null, Buffer.from(hashHex, 'ascii'), key, bytes);
  } catch {
    return false;
  }
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function formatSignatureLine(format: SignatureFormat, fields: SignatureFields): string {
  const provenance = fields.provenance ? `|${fields.provenance}` : '';
  const body = `rye:signed:${fields.timestamp}:${fields.hash}:${fields.signature}:${fields.fingerprint}${provenance}`;
  return format.suffix ? `${format.prefix} ${body} ${format.suffix}` : `${format.prefix} ${body}`;
}

const FIELDS_PATTERN =
  'rye:signed:(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z):([a-f0-9]{64}):([A-Za-z0-9_-]+={0,2}):([a-f0-9]{16})(?:\\|([a-zA-Z0-9_-]+@[a-zA-Z0-9_-]+))?';
const lineRegexes = new Map<string, RegExp>();

/** Escapes text for use inside a RegExp source. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function signatureLineRegex(format: SignatureFormat): RegExp {
  const key = `${format.prefix}\u0000${format.suffix ?? ''}`;
  let regex = lineRegexes.get(key);
  if (!regex) {
    const suffix = format.suffix ? `\\s*${escapeRegex(format.suffix)}` : '';
    regex = new RegExp(`^${escapeRegex(format.prefix)} ${FIELDS_PATTERN}${suffix}\\s*$`);
    lineRegexes.set(key, regex);
  }
  return regex;
}

export function parseSignatureLine(line: string, format: SignatureFormat): SignatureFields | undefined {
  const match = signatureLineRegex(format).exec(line);
  if (!match) return undefined;
  const [, timestamp, hash, signature, fp, provenance] = match;
  const fields: SignatureFields = {
    timestamp: timestamp!,
    hash: hash!,
    signature: signature!,
    fingerprint: fp!,
  };
  if (provenance) fields.provenance = provenance;
  return fields;
}

/** Index of the line where a signature belongs: 1 after a shebang when the format allows it. */
export function signatureLineIndex(text: string, format: SignatureFormat): number {
  return format.afterShebang && text.startsWith('#!') ? 1 : 0;
}

/** Finds the signature line of a (newline-normalised) text, at the position its format puts it. */
export function findSignature(text: string, format: SignatureFormat): LocatedSignature | undefined {
  const lineIndex = signatureLineIndex(text, format);
  const line = nthLine(text, lineIndex);
  if (line === undefined) return undefined;
  const fields = parseSignatureLine(line, format);
  return fields ? { ...fields, lineIndex, line } : undefined;
}

/** Returns line `n` (zero-based) without its newline, or undefined if the text is shorter. */
export function nthLine(text: string, n: number): string | undefined {
  let start = 0;
  for (let i = 0; i < n; i++) {
    const next = text.indexOf('\n', start);
    if (next === -1) return undefined;
    start = next + 1;
  }
  if (start >= text.length && n > 0) return undefined;
  const end = text.indexOf('\n', start);
  return end === -1 ? text.slice(start) : text.slice(start, end);
}

/** UTC timestamp in the signature's format: seconds precision, `Z`. */
export function signatureTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
