import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fingerprint, generateKeyPair, signContent } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { trustFileText } from '../src/index.js';
import { createWorkspace } from './helpers/workspace.js';

async function writeKeyFile(base: string, name: string, text: string): Promise<void> {
  const dir = join(base, '.ai', 'config', 'keys', 'trusted');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), text);
}

describe('trust store', () => {
  it('accepts unsigned key files and key files signed by another trusted key (or self-signed)', async () => {
    const ws = await createWorkspace();
    const peer = generateKeyPair();
    const selfSigned = generateKeyPair();
    const fp = fingerprint(peer.publicKeyPem);
    const signedByUser = signContent(trustFileText(peer.publicKeyPem, 'peer'), {
      format: { prefix: '#' },
      keyPair: ws.userKey,
    });
    await writeKeyFile(ws.project, `${fp}.toml`, signedByUser);
    const selfFp = fingerprint(selfSigned.publicKeyPem);
    await writeKeyFile(
      ws.project,
      `${selfFp}.toml`,
      signContent(trustFileText(selfSigned.publicKeyPem, 'me'), {
        format: { prefix: '#' },
        keyPair: selfSigned,
      }),
    );
    const executor = await ws.executor();
    expect(executor.trust.lookup(fp, 'project')).toMatchObject({
      fingerprint: fp,
      owner: 'peer',
      space: 'project',
    });
    expect(executor.trust.lookup(selfFp, 'project')).toMatchObject({ owner: 'me' });
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
