import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fingerprint, generateKeyPair, signContent } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { trustFileText } from '../src/index.js';
import { parseTrustToml } from '../src/trust.js';
import { createWorkspace } from './helpers/workspace.js';

async function writeKeyFile(base: string, name: string, text: string): Promise<void> {
  const dir = join(base, '.ai', 'config', 'keys', 'trusted');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), text);
}

describe('trust store', () => {
  it('project entries count only when a user-trusted key signed them', async () => {
    const ws = await createWorkspace();
    const peer = generateKeyPair();
    const selfSigned = generateKeyPair();
    const unsigned = generateKeyPair();
    const [fp, selfFp, unsignedFp] = [peer, selfSigned, unsigned].map((k) => fingerprint(k.publicKeyPem)) as [
      string,
      string,
      string,
    ];
    const signed = (pem: string, owner: string, keyPair: typeof peer) =>
      signContent(trustFileText(pem, owner), { format: { prefix: '#' }, keyPair });
    await writeKeyFile(ws.project, `${fp}.toml`, signed(peer.publicKeyPem, 'peer', ws.userKey));
    await writeKeyFile(ws.project, `${selfFp}.toml`, signed(selfSigned.publicKeyPem, 'me', selfSigned));
    await writeKeyFile(ws.project, `${unsignedFp}.toml`, trustFileText(unsigned.publicKeyPem, 'cloned'));
    const executor = await ws.executor();
    expect(executor.trust.lookup(fp, 'project')).toMatchObject({
      fingerprint: fp,
      owner: 'peer',
      space: 'project',
    });
    // A project cannot vouch for itself: self-signed or unsigned project entries count for nothing…
    expect(executor.trust.lookup(selfFp, 'project')).toBeUndefined();
    expect(executor.trust.lookup(unsignedFp, 'project')).toBeUndefined();
    // …while the user's own store may hold self-signed and unsigned entries (upstream behaviour).
    await writeKeyFile(ws.user, `${selfFp}.toml`, signed(selfSigned.publicKeyPem, 'me', selfSigned));
    await writeKeyFile(ws.user, `${unsignedFp}.toml`, trustFileText(unsigned.publicKeyPem, 'mine'));
    // (Now that the user trusts that key, its project entry is signed by a user-trusted key too.)
    expect(executor.trust.lookup(selfFp, 'project')).toMatchObject({ owner: 'me' });
    expect(executor.trust.lookup(unsignedFp, 'project')).toMatchObject({ owner: 'mine', space: 'user' });
  });

  it('skips a key file that was edited after signing, or whose PEM does not match its name', async () => {
    const ws = await createWorkspace();
    const peer = generateKeyPair();
    const fp = fingerprint(peer.publicKeyPem);
    const signed = signContent(trustFileText(peer.publicKeyPem, 'peer'), {
      format: { prefix: '#' },
      keyPair: ws.userKey,
    });
    await writeKeyFile(ws.project, `${fp}.toml`, signed.replace('owner = "peer"', 'owner = "admin"'));
    const other = generateKeyPair();
    await writeKeyFile(
      ws.project,
      `${fingerprint(other.publicKeyPem)}.toml`,
      trustFileText(peer.publicKeyPem, 'liar'),
    );
    const executor = await ws.executor();
    expect(executor.trust.lookup(fp, 'project')).toBeUndefined();
    expect(executor.trust.lookup(fingerprint(other.publicKeyPem), 'project')).toBeUndefined();
  });

  it('a key trusted only by a system bundle vouches only for system items (DECISIONS 12)', async () => {
    const ws = await createWorkspace();
    const fp = fingerprint(ws.bundleKey.publicKeyPem);
    const executor = await ws.executor();
    expect(executor.trust.lookup(fp, 'system')).toMatchObject({ owner: 'bundle' });
    expect(executor.trust.lookup(fp, 'project')).toBeUndefined();
    expect(executor.trust.lookup(fp, 'user')).toBeUndefined();
  });
});

describe('trust entries read without a TOML parser', () => {
  const key = generateKeyPair().publicKeyPem;
  const canonical = [
    trustFileText(key, 'ryeos-bundle'),
    trustFileText(key, 'a "quoted" \\ back\tslash\nname', 'attested\u2028 ✓ ünïcode'),
    trustFileText(key, '', ''),
    trustFileText(`\n${key}\n\n`, 'padded pem'),
  ];
  const other = [
    trustFileText(key, 'control \u0001 char'), // JSON writes \u0001: left to TOML
    trustFileText(key, 'x').replace('owner = "x"', "owner = 'x'"),
    trustFileText(key, 'x').replace('\n\n[public_key]', '\nextra = 1\n\n[public_key]'),
    trustFileText(key, 'x').replace(/\n/g, '\r\n'),
    trustFileText(key, 'x').replace('owner = "x"', 'owner = "\\u0078"'),
    trustFileText(key, 'x').replace('owner = "x"', 'owner = "x" # comment'),
    trustFileText(key, 'x').replace('owner = "x"', 'owner = "a\tb"'),
    trustFileText(key, 'x').replace('"""\n-----BEGIN', '"""-----BEGIN'),
  ];

  it('gives what smol-toml gives for the layout trustFileText writes, and leaves the rest to it', async () => {
    const toml = (await import('smol-toml')) as { parse(text: string): Record<string, unknown> };
    let parsedBy = 0;
    const counting = {
      parse(text: string) {
        parsedBy++;
        return toml.parse(text);
      },
    };
    for (const text of canonical) {
      expect(parseTrustToml(text, counting), text).toEqual(toml.parse(text));
    }
    expect(parsedBy).toBe(0);
    for (const text of other) {
      const before = parsedBy;
      let expected: unknown;
      try {
        expected = toml.parse(text);
      } catch (error) {
        expected = error;
      }
      if (expected instanceof Error) expect(() => parseTrustToml(text, counting)).toThrow();
      else expect(parseTrustToml(text, counting), text).toEqual(expected);
      expect(parsedBy, text).toBe(before + 1);
    }
  });
});
