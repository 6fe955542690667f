/**
 * Who signs a thread's files and who may have signed them. The runner passes the user's key as a
 * `Signer`; readers pass the trust store. Both are thin wrappers over lillux's Ed25519 helpers
 * and the executor's key loading and trust lookup: no crypto of our own.
 */

import type { TrustStore } from '@ryeos/executor';
import { loadSigningKey } from '@ryeos/executor';
import type { KeyPairPem, TrustedKey } from '@ryeos/lillux';
import { fingerprint, signatureTimestamp, signHash, verifyHashSignature } from '@ryeos/lillux';

export interface Signature {
  /** Ed25519 over the ASCII bytes of the hash hex, base64url with padding. */
  sig: string;
  /** First 16 hex of sha256(public PEM): the trust-store file name. */
  fp: string;
}

/** Signs a sha256 hex digest; the key never leaves the object. */
export interface Signer {
  readonly fingerprint: string;
  sign(hashHex: string): Signature;
}

/** A trusted key by fingerprint, or undefined when nobody the user trusts holds it. */
export type KeyResolver = (fingerprint: string) => TrustedKey | undefined;

/** What a reader accepts: the executor's trust store, or a resolver (tests, other stores). */
export type Trust = KeyResolver | Pick<TrustStore, 'lookup'>;

export function signerFromKeyPair(keyPair: KeyPairPem): Signer {
  // The trust store names a key by the fingerprint of its trimmed PEM plus one newline
  // (executor `trustKey`); sign under the same name so our own key is found.
  const fp = fingerprint(`${keyPair.publicKeyPem.trim()}\n`);
  return {
    fingerprint: fp,
    sign: (hashHex) => ({ sig: signHash(hashHex, keyPair.privateKeyPem), fp }),
  };
}

/**
 * The user's signer from their key directory (`RyeSettings.signingKeyDir`). A missing key fails
 * with the executor's "No signing keypair found" error and its generate_key fix (DECISIONS 20): keys
 * are never created here.
 */
export async function loadSigner(keyDir: string): Promise<Signer> {
  return signerFromKeyPair(await loadSigningKey(keyDir));
}

/**
 * A thread's files live in project space, so they are vouched for by the keys a project item may
 * be signed with: user and project trust stores, never a system bundle's (DECISIONS 12).
 */
export function keyResolver(trust: Trust): KeyResolver {
  return typeof trust === 'function' ? trust : (fp) => trust.lookup(fp, 'project');
}

export type SignatureCheck = { ok: true; owner?: string } | { ok: false; reason: string };

/** Checks one (hash, sig, fp) triple: the key is trusted and the signature is valid. */
export function checkSignature(hashHex: string, sig: string, fp: string, trust: Trust): SignatureCheck {
  const key = keyResolver(trust)(fp);
  if (!key) {
    return {
      ok: false,
      reason: `signed by untrusted key ${fp} (a person trusts its public key file if they know whose it is)`,
    };
  }
  if (!verifyHashSignature(hashHex, sig, key.publicKeyPem))
    return { ok: false, reason: `signed by ${fp}, but the Ed25519 signature does not verify` };
  return key.owner === undefined ? { ok: true } : { ok: true, owner: key.owner };
}

/** Signature timestamps: UTC to the second, `Z` (lillux's format). */
export function signedAt(now?: Date): string {
  return signatureTimestamp(now);
}
