/**
 * A project trust entry counts only as the file `rye keys trust --space project` writes. A user's
 * signature on some other file — a signed tool whose text also parses as TOML, linked or copied
 * into `.ai/config/keys/trusted/` — must never turn into trust in a key (audit of issue 9).
 */
import { copyFile, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fingerprint, generateKeyPair, signContent } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { trustFileText } from '../../src/index.js';
import { useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

/** A Python tool that is also a valid trust entry for `pem` (both languages read these lines). */
const polyglot = (fp: string, pem: string) =>
  `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "helpers"\nfingerprint = "${fp}"\nowner = "ci"\nattestation = ""\n\n[public_key]\npem = """\n${pem.trim()}\n"""\n`;

describe('project trust entries (keys signed as something else)', () => {
  it('a signed tool that parses as a trust entry vouches for nothing, linked or copied', async () => {
    const ws = await workspace();
    const attacker = generateKeyPair();
    const fp = fingerprint(attacker.publicKeyPem);
    const tool = join(ws.project, '.ai', 'tools', 'helpers', 'pinned.py');
    await mkdir(join(ws.project, '.ai', 'tools', 'helpers'), { recursive: true });
    // The user reviewed and signed what looked like a harmless helper.
    await writeFile(
      tool,
      signContent(polyglot(fp, attacker.publicKeyPem), { format: { prefix: '#' }, keyPair: ws.userKey }),
    );
    const trusted = join(ws.project, '.ai', 'config', 'keys', 'trusted');
    await mkdir(trusted, { recursive: true });

    await symlink(tool, join(trusted, `${fp}.toml`));
    expect((await ws.executor()).trust.lookup(fp, 'project')).toBeUndefined();

    await rm(join(trusted, `${fp}.toml`));
    await copyFile(tool, join(trusted, `${fp}.toml`));
    expect((await ws.executor()).trust.lookup(fp, 'project')).toBeUndefined();
  });

  it("a trusted/ folder linked to another project's does not bring its entries along", async () => {
    const ws = await workspace();
    const peer = generateKeyPair();
    const fp = fingerprint(peer.publicKeyPem);
    const other = join(ws.root, 'other-project', '.ai', 'config', 'keys', 'trusted');
    await mkdir(other, { recursive: true });
    await writeFile(
      join(other, `${fp}.toml`),
      signContent(trustFileText(peer.publicKeyPem, 'peer'), { format: { prefix: '#' }, keyPair: ws.userKey }),
    );
    await mkdir(join(ws.project, '.ai', 'config', 'keys'), { recursive: true });
    await symlink(other, join(ws.project, '.ai', 'config', 'keys', 'trusted'));
    expect((await ws.executor()).trust.lookup(fp, 'project')).toBeUndefined();
  });

  it('an untrusted-key error names a key file that is present but ignored, and why', async () => {
    const ws = await workspace();
    const peer = generateKeyPair();
    const fp = fingerprint(peer.publicKeyPem);
    const trusted = join(ws.project, '.ai', 'config', 'keys', 'trusted');
    await mkdir(trusted, { recursive: true });
    // Present, but not signed by a key the user trusts: it counts for nothing.
    await writeFile(join(trusted, `${fp}.toml`), trustFileText(peer.publicKeyPem, 'peer'));
    await ws.write(
      'project',
      'tools/demo/peer.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\nprint("{}")\n',
      peer,
    );
    const result = await (await ws.executor()).executeTool('demo/peer');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(result.error).toContain(
      `Ignored ${join(trusted, `${fp}.toml`)}: a project trust entry counts only when signed by a key you trust in user space`,
    );
  });

  it('the entry rye keys trust writes counts, and a symlink to it does not', async () => {
    const ws = await workspace();
    const peer = generateKeyPair();
    const fp = fingerprint(peer.publicKeyPem);
    const trusted = join(ws.project, '.ai', 'config', 'keys', 'trusted');
    await mkdir(trusted, { recursive: true });
    const text = signContent(trustFileText(peer.publicKeyPem, 'peer'), {
      format: { prefix: '#' },
      keyPair: ws.userKey,
    });
    await writeFile(join(ws.root, 'elsewhere.toml'), text);
    await symlink(join(ws.root, 'elsewhere.toml'), join(trusted, `${fp}.toml`));
    expect((await ws.executor()).trust.lookup(fp, 'project')).toBeUndefined();

    const other = generateKeyPair();
    const otherFp = fingerprint(other.publicKeyPem);
    await writeFile(
      join(trusted, `${otherFp}.toml`),
      signContent(trustFileText(other.publicKeyPem, 'peer'), {
        format: { prefix: '#' },
        keyPair: ws.userKey,
      }),
    );
    expect((await ws.executor()).trust.lookup(otherFp, 'project')).toMatchObject({
      owner: 'peer',
      space: 'project',
    });
  });
});
