/**
 * Markdown signed the way knowledge items are (spec threads §10.4, items §6.2 with DECISIONS 2):
 * line 1 is `<!-- rye:signed:<ts>:<sha256>:<sig>:<fp> -->`, the hash covers the exact bytes of
 * everything after it. The same recipe as lillux `signContent` with the knowledge extractor's
 * format, written against a `Signer` so the private key stays with the caller.
 */
import type { SignatureFormat } from '@ryeos/lillux';
import { findSignature, formatSignatureLine, RyeError, sha256Hex, verifyContent } from '@ryeos/lillux';
import type { Signer, Trust } from './signer.js';
import { keyResolver, signedAt } from './signer.js';

/** The knowledge extractor's `.md` signature format (`<!-- … -->` on line 1). */
export const MARKDOWN_SIGNATURE: SignatureFormat = { prefix: '<!--', suffix: '-->' };

export interface MarkdownVerification {
  valid: boolean;
  error?: string;
}

/** The body with a signature line in front. The body must not start with a signature line. */
export function signMarkdown(body: string, signer: Signer, now?: Date): string {
  if (findSignature(body, MARKDOWN_SIGNATURE)) {
    throw new RyeError('INTERNAL', 'Markdown to sign already starts with a signature line');
  }
  const hash = sha256Hex(body);
  const { sig, fp } = signer.sign(hash);
  const line = formatSignatureLine(MARKDOWN_SIGNATURE, {
    timestamp: signedAt(now),
    hash,
    signature: sig,
    fingerprint: fp,
  });
  return `${line}\n${body}`;
}

/** Verifies signed markdown: exact-bytes hash, trusted key, Ed25519 signature. */
export function verifyMarkdown(text: string, trust: Trust, what = 'file'): MarkdownVerification {
  const result = verifyContent(text, {
    format: MARKDOWN_SIGNATURE,
    legacyRecipe: 'knowledge',
    resolveKey: keyResolver(trust),
  });
  switch (result.status) {
    case 'ok':
      // Our own files are always signed with the whole-content recipe; anything else was forged.
      return result.recipe === 'full'
        ? { valid: true }
        : { valid: false, error: `${what} carries a legacy signature that does not cover its bytes` };
    case 'unsigned':
      return { valid: false, error: `${what} is unsigned (no <!-- rye:signed:… --> first line)` };
    case 'modified':
      return {
        valid: false,
        error: `${what} was modified after signing (signed ${(result.expectedHash ?? '').slice(0, 16)}…, actual ${result.actualHash.slice(0, 16)}…)`,
      };
    case 'untrusted':
      return {
        valid: false,
        error: `${what} is signed by untrusted key ${result.fingerprint} (a person trusts its public key file if they know whose it is)`,
      };
    case 'bad_signature':
      return {
        valid: false,
        error: `${what} is signed by ${result.fingerprint}, but the Ed25519 signature does not verify`,
      };
  }
}

/** A backtick fence longer than any backtick run inside `content` (CommonMark), so it cannot close early. */
export function fenced(content: string, info = ''): string {
  const longest = Math.max(0, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${content}\n${fence}`;
}
