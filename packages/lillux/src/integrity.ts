/**
 * Content hashing and verification of signed text (items-and-execution spec §6.2, DECISIONS 2).
 *
 * New signatures hash the whole newline-normalised file minus its signature line. Verification
 * also accepts the original RYE recipes, reporting which one matched so callers can refuse a
 * legacy signature that leaves part of the file uncovered.
 */

import type { KeyPairPem, LocatedSignature, SignatureFormat } from './signing.js';
import {
  escapeRegex,
  findSignature,
  fingerprint as fingerprintOf,
  formatSignatureLine,
  sha256Hex,
  signatureLineIndex,
  signatureTimestamp,
  signHash,
  verifyHashSignature,
} from './signing.js';

/** Which original recipe applies to a file when a signature does not match the new one. */
export type LegacyRecipe = 'tool' | 'directive' | 'knowledge';

export type RecipeMatch = 'full' | 'legacy_full' | 'legacy_partial';

export type VerificationStatus = 'ok' | 'unsigned' | 'modified' | 'untrusted' | 'bad_signature';

export interface TrustedKey {
  publicKeyPem: string;
  owner?: string;
}

export interface VerifyOptions {
  format: SignatureFormat;
  legacyRecipe: LegacyRecipe;
  /** Looks up a trusted public key by fingerprint; undefined = not trusted. */
  resolveKey: (fingerprint: string) => TrustedKey | undefined;
}

export interface VerificationResult {
  status: VerificationStatus;
  /** Hash of the content under the new recipe. */
  actualHash: string;
  /** The hash recorded in the signature line, when there is one. */
  expectedHash?: string;
  fingerprint?: string;
  owner?: string;
  /** Which recipe matched the recorded hash (only when status is not unsigned/modified). */
  recipe?: RecipeMatch;
  signature?: LocatedSignature;
}

/** CRLF and lone CR → LF. A BOM is kept (it makes a file unsigned, as in the original). */
export function normalizeNewlines(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** Removes line `index` (with its newline) from the text. */
function withoutLine(text: string, index: number): string {
  let start = 0;
  for (let i = 0; i < index; i++) start = text.indexOf('\n', start) + 1;
  const end = text.indexOf('\n', start);
  return end === -1 ? text.slice(0, start) : text.slice(0, start) + text.slice(end + 1);
}

/** The content a new signature covers: the whole text minus the signature line, if present. */
export function signableContent(text: string, format: SignatureFormat): string {
  const normalized = normalizeNewlines(text);
  const located = findSignature(normalized, format);
  return located ? withoutLine(normalized, located.lineIndex) : normalized;
}

export function contentHash(text: string, format: SignatureFormat): string {
  return sha256Hex(signableContent(text, format));
}

// Python's str.strip() whitespace: differs from JS trim() (includes \x1c-\x1f and \x85, excludes \ufeff).
const PY_SPACE =
  '\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');

export function pythonStrip(text: string): string {
  return text.replace(PY_STRIP, '');
}

/**
 * Hash input of the original RYE recipe. `covers` says whether that input is the whole
 * content (so a match is as good as a new signature) or only a part of it.
 */
export function legacyHashInput(
  text: string,
  recipe: LegacyRecipe,
  format: SignatureFormat,
): { input: string; coversWholeContent: boolean } | undefined {
  const normalized = normalizeNewlines(text);
  if (recipe === 'tool') {
    const shebang = /^#!\/[^\n]*\n/.exec(normalized)?.[0] ?? '';
    const rest = normalized.slice(shebang.length);
    const marker = new RegExp(`^${escapeRegex(format.prefix)} (rye|kiwi-mcp):(validated|signed):[^\\n]+\\n`);
    const joined = shebang + rest.replace(marker, '');
    return { input: joined.replace(/^#!\/[^\n]*\n/, ''), coversWholeContent: true };
  }
  if (recipe === 'directive') {
    const start = /<directive[^>]*>/.exec(normalized);
    const end = normalized.lastIndexOf('</directive>');
    if (!start || end < start.index) return undefined;
    const input = pythonStrip(normalized.slice(start.index, end + '</directive>'.length));
    return { input, coversWholeContent: false };
  }
  const rest = normalized.replace(/^<!-- (rye|kiwi-mcp):(validated|signed):[^>]+-->\n/, '');
  if (rest.startsWith('---')) {
    const close = rest.indexOf('---', 3);
    if (close === -1) return undefined;
    return { input: pythonStrip(rest.slice(close + 3)), coversWholeContent: false };
  }
  return { input: rest, coversWholeContent: true };
}

export interface SignOptions {
  format: SignatureFormat;
  keyPair: KeyPairPem;
  /** Fixed clock for reproducible output. */
  now?: Date;
  provenance?: string;
}

/** Returns the text with a fresh signature line in place (any old one removed). */
export function signContent(text: string, options: SignOptions): string {
  const content = signableContent(text, options.format);
  const hash = sha256Hex(content);
  const line = formatSignatureLine(options.format, {
    timestamp: signatureTimestamp(options.now),
    hash,
    signature: signHash(hash, options.keyPair.privateKeyPem),
    fingerprint: fingerprintOf(options.keyPair.publicKeyPem),
    ...(options.provenance ? { provenance: options.provenance } : {}),
  });
  const index = signatureLineIndex(content, options.format);
  if (index === 0) return `${line}\n${content}`;
  const firstBreak = content.indexOf('\n');
  if (firstBreak === -1) return `${content}\n${line}\n`;
  return `${content.slice(0, firstBreak + 1)}${line}\n${content.slice(firstBreak + 1)}`;
}

/**
 * Verifies signed text. Order (spec §6.5): unsigned, content match (either recipe), trusted key,
 * signature. Checks that need item paths (moved, legacy policy) belong to the caller.
 */
export function verifyContent(text: string, options: VerifyOptions): VerificationResult {
  const normalized = normalizeNewlines(text);
  const signature = findSignature(normalized, options.format);
  const actualHash = sha256Hex(signature ? withoutLine(normalized, signature.lineIndex) : normalized);
  if (!signature) return { status: 'unsigned', actualHash };

  const base = { actualHash, expectedHash: signature.hash, fingerprint: signature.fingerprint, signature };
  const recipe = matchRecipe(normalized, signature.hash, actualHash, options);
  if (!recipe) return { status: 'modified', ...base };

  const key = options.resolveKey(signature.fingerprint);
  if (!key) return { status: 'untrusted', ...base, recipe };
  const owner = key.owner !== undefined ? { owner: key.owner } : {};
  if (!verifyHashSignature(signature.hash, signature.signature, key.publicKeyPem)) {
    return { status: 'bad_signature', ...base, recipe, ...owner };
  }
  return { status: 'ok', ...base, recipe, ...owner };
}

function matchRecipe(
  normalized: string,
  recorded: string,
  actualHash: string,
  options: VerifyOptions,
): RecipeMatch | undefined {
  if (recorded === actualHash) return 'full';
  const legacy = legacyHashInput(normalized, options.legacyRecipe, options.format);
  if (!legacy || sha256Hex(legacy.input) !== recorded) return undefined;
  return legacy.coversWholeContent ? 'legacy_full' : 'legacy_partial';
}
