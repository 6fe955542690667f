import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeyPairPem } from '@ryeos/lillux';
import { keyPairFromSeed } from '@ryeos/lillux';
import type { KeyResolver, Signer } from '../src/persistence/signer.js';
import { signerFromKeyPair } from '../src/persistence/signer.js';

/** A deterministic key, its signer, and a resolver that trusts only it. */
export function testKey(seedByte = 7): { keyPair: KeyPairPem; signer: Signer; trust: KeyResolver } {
  const keyPair = keyPairFromSeed(new Uint8Array(32).fill(seedByte));
  const signer = signerFromKeyPair(keyPair);
  const trust: KeyResolver = (fp) =>
    fp === signer.fingerprint ? { publicKeyPem: keyPair.publicKeyPem, owner: 'test' } : undefined;
  return { keyPair, signer, trust };
}

/** Temp directories removed after each test (call `cleanup` from afterEach). */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(prefix = 'rye-persist-'): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}
