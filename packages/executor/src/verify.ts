/**
 * Item verification with the executor's rules on top of lillux's signature check (spec items
 * §6.5): trust scoped by space, moved items, legacy partial signatures and dev mode.
 */
import { dirname, extname, join } from 'node:path';
import type { Fix, LegacyRecipe, SignatureFormat } from '@ryeos/lillux';
import { describeFix, verifyContent } from '@ryeos/lillux';
import type { IntegrityOutcome } from './integrity-error.js';
import { IntegrityError } from './integrity-error.js';
import type { SignableKind } from './refs.js';
import { TYPE_DIRS } from './refs.js';
import type { Space } from './spaces.js';
import type { TrustStore } from './trust.js';

export type { IntegrityOutcome } from './integrity-error.js';
export { IntegrityError, isIntegrityFailure } from './integrity-error.js';

export interface DeclaredIdentity {
  name?: string | undefined;
  category?: string | undefined;
}

export interface VerifyItemInput {
  path: string;
  kind: SignableKind;
  id: string;
  space: Space;
  text: string;
  format: SignatureFormat;
  legacyRecipe: LegacyRecipe;
  /** What the item declares about itself; checked against its path (DECISIONS 3). */
  declared?: DeclaredIdentity;
}

export interface ItemVerification {
  outcome: IntegrityOutcome;
  /** True only when the item fully verified (false when dev mode or a legacy override let it through). */
  verified: boolean;
  hash: string;
  fingerprint?: string;
  owner?: string;
  warnings: string[];
}

/** How strictly items verify: the two integrity switches of `RyeSettings`, as typed flags. */
export interface IntegrityPolicy {
  /** `RYE_DEV_MODE=1`: failures of project and user items become warnings (DECISIONS 4). */
  readonly devMode: boolean;
  /** `RYE_ACCEPT_LEGACY_SIGNATURES=1`: the original's partial signatures pass with a warning. */
  readonly acceptLegacySignatures: boolean;
}

/** Every item verifies fully: no dev mode, no legacy partial signatures. */
export const STRICT_INTEGRITY: IntegrityPolicy = Object.freeze({
  devMode: false,
  acceptLegacySignatures: false,
});

/**
 * What fixes an integrity problem of this item: signing it where it is, or, for a system item
 * (which nobody signs in place), copying it to user space (out of any repository's reach) and signing the copy there.
 */
export function signFix(kind: SignableKind, id: string, space: Space): Fix {
  const ref = `${kind}:${id}`;
  if (space.name === 'system') return { action: 'copy_to_space', ref, to: 'user' };
  return { action: 'sign', refs: [ref], space: space.name };
}

/** The fix in words, for a message: system items say why they are not signed in place. */
function fixWords(fix: Fix): string {
  const words = describeFix(fix);
  return fix.action === 'copy_to_space' ? `system items cannot be signed in place: ${words}` : words;
}

/** The hint of an integrity error: the fix as one sentence every caller can act on. */
function fixSentence(fix: Fix): string {
  const words = fixWords(fix);
  return `${words[0]!.toUpperCase()}${words.slice(1)}.`;
}

export function pathIdentity(id: string): { name: string; category: string } {
  const name = id.split('/').pop() ?? id;
  const dir = dirname(id);
  return { name, category: dir === '.' ? '' : dir };
}

/**
 * When an item's declared name or category disagrees with its path (DECISIONS 3): the message,
 * and the fix that resolves it — move the file back where it says it belongs, or change what it
 * declares to match where it is and sign it there (signing alone changes neither).
 */
function movedProblem(
  input: VerifyItemInput,
  fix: () => string,
): { message: string; hint: string } | undefined {
  if (input.kind === 'config') return undefined;
  const implied = pathIdentity(input.id);
  const declared = input.declared ?? {};
  const nameOk = declared.name === undefined || declared.name === implied.name;
  const categoryOk = declared.category === undefined || declared.category === implied.category;
  if (nameOk && categoryOk) return undefined;
  const name = declared.name ?? implied.name;
  const category = declared.category ?? implied.category;
  const extension = extname(input.path);
  const home = join(input.space.base, '.ai', TYPE_DIRS[input.kind], category, `${name}${extension}`);
  const change = [
    categoryOk ? undefined : `category '${implied.category}'`,
    nameOk ? undefined : `name '${implied.name}'`,
  ]
    .filter(Boolean)
    .join(' and ');
  return {
    message: [
      `Item moved or renamed without re-signing: ${input.path}`,
      `Declared: name '${name}', category '${category}'`,
      `Path implies: name '${implied.name}', category '${implied.category}'`,
    ].join('\n'),
    hint: `Move it back to ${home}, or declare ${change} in the file and sign it where it is (${fix()}).`,
  };
}

/**
 * Verifies an item; throws `RyeError('INTEGRITY')` on any failure unless dev mode downgrades it
 * (project and user items only — system items always verify, DECISIONS 4).
 */
export function verifyItem(
  input: VerifyItemInput,
  trust: TrustStore,
  policy: IntegrityPolicy = STRICT_INTEGRITY,
): ItemVerification {
  const result = verifyContent(input.text, {
    format: input.format,
    legacyRecipe: input.legacyRecipe,
    resolveKey: (fp) => trust.lookup(fp, input.space.name),
  });
  // Worked out only for a failure: a verification that passes (the hot path) needs no words.
  const fixData = () => signFix(input.kind, input.id, input.space);
  const fix = () => fixWords(fixData());
  const base = {
    hash: result.actualHash,
    fingerprint: result.fingerprint,
    owner: result.owner,
    warnings: [] as string[],
  };
  let outcome: IntegrityOutcome = result.status;
  let hint: string | undefined;
  let message: string | undefined;
  const short = (hash: string | undefined) => `${(hash ?? '').slice(0, 16)}…`;

  switch (result.status) {
    case 'unsigned':
      message = `Unsigned item: ${input.path}\nItem type: ${input.kind}\nExpected: rye:signed: header\nFix: ${fix()}`;
      break;
    case 'modified':
      message = result.lineEndingsChanged
        ? `Line endings changed since signing (CR/CRLF): ${input.path}\nThe signature covers the exact bytes, and a changed line ending can change what runs (bash reads CR as an ordinary character)\nFix: restore the original line endings (e.g. git config core.autocrlf false, then check the file out again), or review the file and re-sign: ${fix()}`
        : `Content modified since signing: ${input.path}\nExpected hash: ${short(result.expectedHash)}\nActual hash: ${short(result.actualHash)}\nFix: Re-sign after editing: ${fix()}`;
      break;
    case 'untrusted': {
      const trusted = trust.list(input.space.name).map((k) => k.fingerprint);
      // A key file for this key that is present but counts for nothing is named, with why.
      const ignored = result.fingerprint ? trust.ignoredEntries(result.fingerprint, input.space.name) : [];
      const notes = ignored.map((entry) => `\nIgnored ${entry.path}: ${entry.reason}`).join('');
      message = `Untrusted key ${result.fingerprint} for ${input.path}\nItem signed by: ${result.fingerprint}\nTrusted keys: ${trusted.join(', ') || 'none'}${notes}\nFix: if you trust whoever holds that key, a person trusts their public key file; or review the file, then sign it with your own key: ${fix()}`;
      break;
    }
    case 'bad_signature':
      message = `Ed25519 signature verification failed: ${input.path}\nSigned by: ${result.fingerprint} (${result.owner ?? 'unknown'})\nThis may indicate the file was tampered with after signing\nFix: check the file, then ${fix()}`;
      break;
    case 'ok': {
      if (result.recipe === 'legacy_partial') {
        const part = input.kind === 'directive' ? 'its body (directive)' : 'its front-matter (knowledge)';
        const legacy = `Signature does not cover the whole file: ${input.path}\nThis ${input.kind} was signed with the original recipe, which leaves ${part} unsigned\nFix: ${fix()}`;
        if (policy.acceptLegacySignatures) base.warnings.push(legacy);
        else {
          outcome = 'legacy_partial';
          message = legacy;
          break;
        }
      }
      const moved = movedProblem(input, fix);
      if (moved) {
        outcome = 'moved';
        message = `${moved.message}\nFix: ${moved.hint}`;
        hint = moved.hint;
      }
      break;
    }
  }

  if (!message) return { ...base, outcome, verified: base.warnings.length === 0 };
  if (policy.devMode && input.space.name !== 'system') {
    base.warnings.push(`[DEV MODE] ${message.split('\n')[0]} — executing anyway`);
    return { ...base, outcome, verified: false };
  }
  throw new IntegrityError(outcome as Exclude<IntegrityOutcome, 'ok'>, message, {
    hint: hint ?? fixSentence(fixData()),
    fix: fixData(),
    details: { path: input.path, item_id: `${input.kind}:${input.id}`, space: input.space.label },
  });
}
