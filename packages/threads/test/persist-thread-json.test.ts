import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateSigningKey, Spaces, TrustStore, trustKey } from '@ryeos/executor';
import { isRyeError, sha256Hex, verifyHashSignature } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/persistence/canonical-json.js';
import { keyResolver, loadSigner } from '../src/persistence/signer.js';
import type { ThreadJson } from '../src/persistence/thread-json.js';
import { readThreadJson, writeThreadJson } from '../src/persistence/thread-json.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

function sample(): ThreadJson {
  return {
    thread_id: 'a/b/b-1739820456123',
    directive: 'a/b',
    status: 'completed',
    created_at: '2026-02-17T10:00:56+00:00',
    updated_at: '2026-02-17T10:01:23+00:00',
    model: 'claude-haiku-4-5-20251001',
    limits: {
      turns: 10,
      tokens: 200000,
      spend: 0.1,
      spawns: 10,
      depth: 3,
      duration_seconds: 1800,
      spend_currency: 'USD',
    },
    capabilities: ['rye.execute.tool.rye.file-system.*'],
    inputs: { k: 'v', note: 'café ☕' },
    cost: { turns: 4, input_tokens: 3200, output_tokens: 800, spend: 0.02, elapsed_seconds: 21.5 },
    outputs: { lead_count: '15' },
  };
}

describe('thread.json', () => {
  it('round-trips: written signed and atomically, read back valid', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    const now = new Date('2026-02-17T10:01:23.456Z');
    const written = await writeThreadJson(dir, sample(), signer, { now });
    const { data, verification } = await readThreadJson(dir, trust);
    expect(verification).toEqual({ valid: true });
    expect(data).toEqual(written);
    expect(data._signature).toMatch(
      new RegExp(`^rye:signed:2026-02-17T10:01:23Z:[a-f0-9]{64}:[A-Za-z0-9_-]+={0,2}:${signer.fingerprint}$`),
    );
    // The recipe, step by step: canonical JSON without _signature → sha256 hex → Ed25519 over the hex.
    // The timestamp holds two colons: rye:signed:<date>T<hh>:<mm>:<ss>Z:<hash>:<sig>:<fp>.
    const [, , , , , hash, sig] = data._signature!.split(':') as string[];
    const { _signature: _, ...rest } = data;
    expect(hash).toBe(sha256Hex(canonicalJson(rest)));
    expect(sig).toMatch(/==$/); // base64url keeps its padding
    expect(verifyHashSignature(hash!, sig!, testKey().keyPair.publicKeyPem)).toBe(true);
    // No temp files left behind.
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(dir)).toEqual(['thread.json']);
  });

  it('omits empty optional keys', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    const data = {
      ...sample(),
      inputs: {},
      outputs: {},
      parent_thread_id: undefined,
      previous_thread_id: '',
    };
    await writeThreadJson(dir, data as ThreadJson, signer);
    const raw = JSON.parse(await readFile(join(dir, 'thread.json'), 'utf8'));
    expect(Object.keys(raw)).not.toContain('inputs');
    expect(Object.keys(raw)).not.toContain('outputs');
    expect(Object.keys(raw)).not.toContain('parent_thread_id');
    expect(Object.keys(raw)).not.toContain('previous_thread_id');
    expect((await readThreadJson(dir, trust)).verification.valid).toBe(true);
  });

  it('still verifies after re-indentation (the hash is over canonical JSON)', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    await writeThreadJson(dir, { ...sample(), parent_thread_id: 'p/p-1' }, signer);
    const path = join(dir, 'thread.json');
    await writeFile(path, JSON.stringify(JSON.parse(await readFile(path, 'utf8'))));
    expect((await readThreadJson(dir, trust)).verification).toEqual({ valid: true });
  });

  it('a one-byte edit of a value is invalid, with a clear reason', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    await writeThreadJson(dir, sample(), signer);
    const path = join(dir, 'thread.json');
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace('"spend": 0.02', '"spend": 0.03'));
    const { verification } = await readThreadJson(dir, trust);
    expect(verification.valid).toBe(false);
    expect(verification.error).toMatch(
      /^thread\.json was modified after signing \(signed hash [a-f0-9]{16}…, content hash [a-f0-9]{16}…\)$/,
    );
  });

  it('every one-byte change of a signed value or of the signature is caught', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    await writeThreadJson(dir, sample(), signer);
    const path = join(dir, 'thread.json');
    const original = await readFile(path, 'utf8');
    // Flip one character inside each string value (keys and values alike), including _signature.
    const positions = [...original.matchAll(/"([^"\n]+)"/g)].map((m) => m.index! + 1);
    expect(positions.length).toBeGreaterThan(30);
    for (const at of positions) {
      const ch = original[at]!;
      const swapped = ch === 'a' ? 'b' : 'a';
      await writeFile(path, original.slice(0, at) + swapped + original.slice(at + 1));
      const { verification } = await readThreadJson(dir, trust);
      expect(verification.valid, `edit at ${at}`).toBe(false);
    }
  });

  it('a signature by a key nobody trusts is invalid', async () => {
    const dir = await dirs.make();
    await writeThreadJson(dir, sample(), testKey(1).signer);
    const { verification } = await readThreadJson(dir, testKey(2).trust);
    expect(verification.valid).toBe(false);
    expect(verification.error).toMatch(/untrusted key [a-f0-9]{16}/);
  });

  it('a tampered signature is invalid', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    const written = await writeThreadJson(dir, sample(), signer);
    const sig = written._signature!.split(':')[6]!;
    const forged =
      sig[5] === 'A' ? `${sig.slice(0, 5)}B${sig.slice(6)}` : `${sig.slice(0, 5)}A${sig.slice(6)}`;
    await writeFile(
      join(dir, 'thread.json'),
      JSON.stringify({ ...written, _signature: written._signature!.replace(sig, forged) }),
    );
    const { verification } = await readThreadJson(dir, trust);
    expect(verification).toEqual({
      valid: false,
      error: expect.stringMatching(
        /^thread\.json is signed by [a-f0-9]{16}, but the Ed25519 signature does not verify$/,
      ),
    });
  });

  it('an unsigned file, a missing file and broken JSON are told apart', async () => {
    const dir = await dirs.make();
    const { trust } = testKey();
    await expect(readThreadJson(dir, trust)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await writeFile(join(dir, 'thread.json'), JSON.stringify(sample()));
    expect((await readThreadJson(dir, trust)).verification).toEqual({
      valid: false,
      error: 'thread.json is unsigned (no _signature)',
    });
    await writeFile(join(dir, 'thread.json'), '{"thread_id": ');
    await expect(readThreadJson(dir, trust)).rejects.toMatchObject({ code: 'INTEGRITY' });
  });

  it("verifies against the executor's trust store, and signs with the user's key from disk", async () => {
    const root = await dirs.make();
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(project, { recursive: true });
    const keyDir = join(user, '.ai', 'config', 'keys', 'signing');
    const key = await generateSigningKey(keyDir);
    const spaces = new Spaces({ projectPath: project, userSpace: user });
    const signer = await loadSigner(keyDir);
    expect(signer.fingerprint).toBe(key.fingerprint);
    const dir = join(project, '.ai', 'state', 'threads', 'a', 'b', 'b-1');
    await writeThreadJson(dir, sample(), signer);

    const before = new TrustStore(spaces);
    expect((await readThreadJson(dir, before)).verification.error).toMatch(/untrusted key/);
    await trustKey(spaces.user, key.publicKeyPem);
    const after = new TrustStore(spaces);
    expect((await readThreadJson(dir, after)).verification).toEqual({ valid: true });
    expect(keyResolver(after)(signer.fingerprint)?.publicKeyPem).toBe(key.publicKeyPem);
  });

  it('a missing signing key fails with the generate_key fix (keys are never created here)', async () => {
    const keyDir = join(await dirs.make(), 'no-keys');
    const error = await loadSigner(keyDir).catch((e: unknown) => e);
    expect(isRyeError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CONFIG', message: `No signing keypair found in ${keyDir}` });
    expect((error as { fix: unknown }).fix).toEqual({ action: 'generate_key', force: false });
    const { existsSync } = await import('node:fs');
    expect(existsSync(keyDir)).toBe(false);
  });
});
