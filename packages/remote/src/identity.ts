/** The server's Ed25519 identity: created on first start, kept 0700, and what signs its records. */
import { sign } from 'node:crypto';
import { generateSigningKey } from '@ryeos/executor';
import { fingerprint } from '@ryeos/lillux';
import { snapshotSigningText } from 'ryeos';
import { ensurePrivateDir } from './config.js';

export interface ServerIdentity {
  dir: string;
  publicKeyPem: string;
  fingerprint: string;
  /** base64 Ed25519 signature over `snapshotSigningText(hash)`. */
  signSnapshot(executionSnapshotHash: string): string;
}

export async function loadServerIdentity(dir: string): Promise<ServerIdentity> {
  ensurePrivateDir(dir);
  const key = await generateSigningKey(dir);
  return {
    dir,
    publicKeyPem: key.publicKeyPem,
    fingerprint: fingerprint(key.publicKeyPem),
    signSnapshot: (hash) =>
      sign(null, Buffer.from(snapshotSigningText(hash), 'utf8'), key.privateKeyPem).toString('base64'),
  };
}
