/**
 * Content hashing and verification of signed text (items-and-execution spec §6.2, DECISIONS 2).
 *
 * New signatures hash the exact content of the whole file minus its signature line: no newline
 * normalisation, because bash reads CR as an ordinary character (a CR that turns two lines into
 * one, or ends a file name, changes what runs). Verification also accepts the original RYE
 * recipes, reporting which one matched so callers can refuse a legacy signature that leaves part
 * of the file uncovered.
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
  /**
   * Set on `modified` when only the line endings differ from what was signed (CRLF ↔ LF, or a
   * lone CR): still refused, but the message can say what happened.
   */
  lineEndingsChanged?: boolean;
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

/** The content a new signature covers: the exact text minus the signature line, if present. */
export function signableContent(text: string, format: SignatureFormat): string {
  const located = findSignature(text, format);
  return located ? withoutLine(text, located.lineIndex) : text;
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
 * A shebang line exactly as the original's tools carried it: one of the usual interpreters
 * (`#!/usr/bin/env python3`, `#!/bin/bash -e`, `#!/usr/bin/python3`). The line is left out of the
 * hash, so nothing may hide in it: not another interpreter (a runtime that executes the file
 * directly would start it), not quotes (`env -S sh -c '…'`), not a PEP 263 `coding:` (Python would
 * decode the signed bytes differently).
 */
const PLAIN_SHEBANG =
  /^#!(?:\/usr\/bin\/env (?:python3?(?:\.\d+)?|bash|sh|node)|\/(?:usr\/)?bin\/(?:bash|sh|dash)(?: -[eux]{1,3})?|\/usr(?:\/local)?\/bin\/python3?(?:\.\d+)?)\n$/;
const SHEBANG_LINE = /^#!\/[^\n]*\n/;

/**
 * Whether the original tool recipe may leave this shebang line out of the hash. Never for
 * JavaScript kinds (their comment prefix is `//`): JavaScript ends a hashbang comment at
 * U+2028/U+2029, so a skipped line could carry code. Otherwise only a plain ASCII interpreter line.
 */
function mayOmitShebang(line: string, format: SignatureFormat): boolean {
  return format.prefix !== '//' && PLAIN_SHEBANG.test(line);
}

/**
 * Hash input of the original RYE recipe. `covers` says whether that input is the whole
 * content (so a match is as good as a new signature) or only a part of it. Undefined when the
 * recipe does not apply: a file with any CR (the original normalised line endings first, which
 * would let a CR change what bash runs) or a skipped line that could carry code.
 */
export function legacyHashInput(
  text: string,
  recipe: LegacyRecipe,
  format: SignatureFormat,
): { input: string; coversWholeContent: boolean } | undefined {
  if (text.includes('\r')) return undefined;
  if (recipe === 'tool') {
    const shebang = SHEBANG_LINE.exec(text)?.[0] ?? '';
    const rest = text.slice(shebang.length);
    const marker = new RegExp(`^${escapeRegex(format.prefix)} (rye|kiwi-mcp):(validated|signed):[^\\n]+\\n`);
    const joined = shebang + rest.replace(marker, '');
    // The recipe leaves out one leading shebang line: the file's first line, or the line right
    // after the signature. That line is unsigned, so it must be one that cannot carry code.
    const skipped = SHEBANG_LINE.exec(joined)?.[0] ?? '';
    if (skipped && !mayOmitShebang(skipped, format)) return undefined;
    return { input: joined.slice(skipped.length), coversWholeContent: true };
  }
  if (recipe === 'directive') {
    const start = /<directive[^>]*>/.exec(text);
    const end = text.lastIndexOf('</directive>');
    if (!start || end < start.index) return undefined;
    const input = pythonStrip(text.slice(start.index, end + '</directive>'.length));
    return { input, coversWholeContent: false };
  }
  const rest = text.replace(/^<!-- (rye|kiwi-mcp):(validated|signed):[^>]+-->\n/, '');
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
  const signature = findSignature(text, options.format);
  const actualHash = sha256Hex(signature ? withoutLine(text, signature.lineIndex) : text);
  if (!signature) return { status: 'unsigned', actualHash };

  const base = { actualHash, expectedHash: signature.hash, fingerprint: signature.fingerprint, signature };
  const recipe = matchRecipe(text, signature.hash, actualHash, options);
  if (!recipe) {
    const lineEndings = onlyLineEndingsDiffer(text, signature.hash, options)
      ? { lineEndingsChanged: true }
      : {};
    return { status: 'modified', ...base, ...lineEndings };
  }

  const key = options.resolveKey(signature.fingerprint);
  if (!key) return { status: 'untrusted', ...base, recipe };
  const owner = key.owner !== undefined ? { owner: key.owner } : {};
  if (!verifyHashSignature(signature.hash, signature.signature, key.publicKeyPem)) {
    return { status: 'bad_signature', ...base, recipe, ...owner };
  }
  return { status: 'ok', ...base, recipe, ...owner };
}

/** Whether the text matches the recorded hash once its line endings are made LF or CRLF. */
function onlyLineEndingsDiffer(text: string, recorded: string, options: VerifyOptions): boolean {
  const lf = normalizeNewlines(text);
  const candidates = lf === text ? [lf.replace(/\n/g, '\r\n')] : [lf, lf.replace(/\n/g, '\r\n')];
  return candidates.some((candidate) => {
    const signature = findSignature(candidate, options.format);
    if (!signature) return false;
    const content = withoutLine(candidate, signature.lineIndex);
    if (sha256Hex(content) === recorded) return true;
    const legacy = legacyHashInput(candidate, options.legacyRecipe, options.format);
    return legacy !== undefined && sha256Hex(legacy.input) === recorded;
  });
}

function matchRecipe(
  text: string,
  recorded: string,
  actualHash: string,
  options: VerifyOptions,
): RecipeMatch | undefined {
  if (recorded === actualHash) return 'full';
  const legacy = legacyHashInput(text, options.legacyRecipe, options.format);
  if (!legacy || sha256Hex(legacy.input) !== recorded) return undefined;
  return legacy.coversWholeContent ? 'legacy_full' : 'legacy_partial';
}
