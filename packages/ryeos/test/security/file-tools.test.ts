/**
 * Attacks 9 and 12 of the integrity review: the reach of file tools (the user's keys and trust
 * store, whatever the project), a symlink flipped between a path check and the open, `load --to
 * project` through a symlinked folder, and raw errno text where a typed error belongs.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRye, type Rye } from '../../src/index.js';
import type { TempProject } from '../helpers.js';
import { rye, useTempProjects } from '../helpers.js';

const project = useTempProjects();

async function setup(): Promise<{ t: TempProject; r: Rye; key: string }> {
  const t = await project();
  expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
  const r = createRye({
    projectPath: t.project,
    userSpace: t.user,
    env: { PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath },
  });
  return { t, r, key: join(t.user, '.ai', 'config', 'keys', 'signing', 'private_key.pem') };
}

describe("file tools never touch the user's keys or trust store (attack 9)", () => {
  it('not when the project is the user space itself, not by grep, not through a symlink', async () => {
    const { t, key } = await setup();
    const home = createRye({
      projectPath: t.user,
      userSpace: t.user,
      env: { PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath },
    });
    const read = await home.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: '.ai/config/keys/signing/private_key.pem' },
    });
    expect(read.status).toBe('error');
    expect(JSON.stringify(read)).not.toContain('PRIVATE KEY');
    expect(String(read.error)).toMatch(/never touch/);
    const write = await home.execute({
      item_id: 'tool:rye/file-system/write',
      parameters: { path: '.ai/config/keys/trusted/evil.toml', content: 'x' },
    });
    expect(write.status).toBe('error');
    const grep = await home.execute({
      item_id: 'tool:rye/file-system/grep',
      parameters: { pattern: 'PRIVATE KEY' },
    });
    expect(JSON.stringify(grep)).not.toContain('private_key.pem');
    const { r } = {
      r: createRye({ projectPath: t.project, userSpace: t.user, env: { PATH: process.env.PATH } }),
    };
    await symlink(join(t.user, '.ai', 'config', 'keys'), join(t.project, 'keys'));
    const viaLink = await r.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: 'keys/signing/private_key.pem' },
    });
    expect(viaLink.status).toBe('error');
    expect(JSON.stringify(viaLink)).not.toContain('PRIVATE KEY');
    expect(await readFile(key, 'utf8')).toContain('PRIVATE KEY');
  });

  it('nor user config (bundles.yaml trusts the keys of a bundle) or the user .env (credentials)', async () => {
    const { t } = await setup();
    const home = createRye({
      projectPath: t.user,
      userSpace: t.user,
      env: { PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath },
    });
    await writeFile(join(t.user, '.ai', '.env'), 'API_TOKEN=secret-value\n');
    const bundles = await home.execute({
      item_id: 'tool:rye/file-system/write',
      parameters: { path: '.ai/config/bundles.yaml', content: 'bundles:\n  - {id: zz, path: /tmp/evil}\n' },
    });
    expect(bundles).toMatchObject({ status: 'error' });
    expect(String(bundles.error)).toMatch(/never touch/);
    expect(existsSync(join(t.user, '.ai', 'config', 'bundles.yaml'))).toBe(false);
    const hooks = await home.execute({
      item_id: 'tool:rye/file-system/write',
      parameters: { path: '.ai/config/hooks.yaml', content: 'hooks: []\n' },
    });
    expect(hooks).toMatchObject({ status: 'error' });
    const env = await home.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: '.ai/.env' },
    });
    expect(env).toMatchObject({ status: 'error' });
    expect(JSON.stringify(env)).not.toContain('secret-value');
    const grep = await home.execute({
      item_id: 'tool:rye/file-system/grep',
      parameters: { pattern: 'API_TOKEN' },
    });
    expect(JSON.stringify(grep)).not.toContain('secret-value');
  });

  it("nor the project's ryeos state: its thread registry, budget ledger and cancel markers", async () => {
    const { t, r } = await setup();
    const state = join(t.project, '.ai', 'state', 'threads');
    await mkdir(join(state, 'acme', 'other-1'), { recursive: true });
    await writeFile(join(state, 'budget_ledger.db'), 'SQLite format 3\u0000 max_spend 1.0');
    const ledger = await r.execute({
      item_id: 'tool:rye/file-system/write',
      parameters: {
        path: '.ai/state/threads/budget_ledger.db',
        content: 'SQLite format 3\u0000 max_spend 999',
      },
    });
    expect(ledger).toMatchObject({ status: 'error' });
    expect(String(ledger.error)).toMatch(/never touch/);
    expect(await readFile(join(state, 'budget_ledger.db'), 'utf8')).toContain('max_spend 1.0');
    const marker = await r.execute({
      item_id: 'tool:rye/file-system/write',
      parameters: { path: '.ai/state/threads/acme/other-1/.cancel_requested', content: '' },
    });
    expect(marker).toMatchObject({ status: 'error' });
    expect(existsSync(join(state, 'acme', 'other-1', '.cancel_requested'))).toBe(false);
    const read = await r.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: '.ai/state/threads/budget_ledger.db' },
    });
    expect(read).toMatchObject({ status: 'error' });
    for (const tool of ['glob', 'grep'] as const) {
      const found = await r.execute({
        item_id: `tool:rye/file-system/${tool}`,
        parameters: { pattern: tool === 'glob' ? '**/*.db' : 'max_spend' },
      });
      expect(found.status, JSON.stringify(found)).toBe('success');
      expect(JSON.stringify(found)).not.toContain('budget_ledger');
    }
  });

  it('the project cannot be the file-system root', async () => {
    const { t } = await setup();
    const root = createRye({ projectPath: '/', userSpace: t.user, env: { PATH: process.env.PATH } });
    const result = await root.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: 'etc/passwd' },
    });
    expect(result.status).toBe('error');
    expect(JSON.stringify(result)).not.toContain('root:x:0:0');
  });
});

describe('smaller gaps (attack 12)', () => {
  it('a symlink flipped between the check and the open never leaks the file outside', async () => {
    const { t, r } = await setup();
    // `d/file.txt` is checked while `d` is a real folder in the project, then read after `d` has
    // become a link to a folder outside holding a secret `file.txt`.
    const outsideDir = join(t.root, 'outside');
    await mkdir(outsideDir);
    await writeFile(join(outsideDir, 'file.txt'), 'TOP-SECRET\n');
    await mkdir(join(t.project, 'd'));
    await writeFile(join(t.project, 'd', 'file.txt'), 'harmless\n');
    // A separate process flips the folder as fast as it can (sync calls, no event loop between).
    const flipScript = `
      const { symlinkSync, renameSync, rmSync } = require('node:fs');
      const [dir, outside] = process.argv.slice(1);
      for (;;) {
        try {
          renameSync(dir, dir + '.real');
          symlinkSync(outside, dir);
          rmSync(dir);
          renameSync(dir + '.real', dir);
        } catch {}
      }`;
    const flipper = spawn(process.execPath, ['-e', flipScript, join(t.project, 'd'), outsideDir], {
      stdio: 'ignore',
    });
    let leaks = 0;
    try {
      for (let i = 0; i < 120; i++) {
        const result = await r.execute({
          item_id: 'tool:rye/file-system/read',
          parameters: { path: 'd/file.txt' },
        });
        if (JSON.stringify(result).includes('TOP-SECRET')) leaks++;
      }
    } finally {
      flipper.kill('SIGKILL');
    }
    expect(leaks).toBe(0);
  }, 60_000);

  it('load --to project does not follow a symlinked folder out of the project', async () => {
    const { t, r } = await setup();
    const elsewhere = join(t.root, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(join(t.project, '.ai', 'tools', 'rye', 'core', 'runtimes'), { recursive: true });
    await symlink(elsewhere, join(t.project, '.ai', 'tools', 'rye', 'core', 'runtimes', 'bash'));
    const result = await r.load({ item_id: 'tool:rye/core/runtimes/bash/bash', destination: 'project' });
    expect(result).toMatchObject({ status: 'error', error: expect.stringMatching(/leads out of the space/) });
    await expect(readFile(join(elsewhere, 'bash.yaml'))).rejects.toThrow();
  });

  it('load never copies config into user space (bundles.yaml there trusts a bundle for every project)', async () => {
    const { t, r } = await setup();
    await mkdir(join(t.project, '.ai', 'config'), { recursive: true });
    await writeFile(
      join(t.project, '.ai', 'config', 'bundles.yaml'),
      'bundles:\n  - {id: evil, path: /tmp/evil}\n',
    );
    const result = await r.load({ item_id: 'config:bundles', destination: 'user' });
    expect(result).toMatchObject({ status: 'error', error_type: 'permission' });
    expect(existsSync(join(t.user, '.ai', 'config', 'bundles.yaml'))).toBe(false);
    // To project space it is still a copy like any other.
    expect(await r.load({ item_id: 'config:bundles' })).toMatchObject({ status: 'success' });
  });

  it('load never serves user config (server configs hold credentials), nor copies it into a project', async () => {
    const { t, r } = await setup();
    await mkdir(join(t.user, '.ai', 'config', 'mcp'), { recursive: true });
    await writeFile(
      join(t.user, '.ai', 'config', 'mcp', 'srv.yaml'),
      'headers: {Authorization: Bearer SECRET123}\n',
    );
    for (const request of [
      { item_id: 'config:mcp/srv' },
      { item_id: 'config:mcp/srv', source: 'user' as const },
      { item_id: 'config:mcp/srv', destination: 'project' as const },
    ]) {
      const result = await r.load(request);
      expect(result, JSON.stringify(request)).toMatchObject({ status: 'error', error_type: 'permission' });
      expect(JSON.stringify(result)).not.toContain('SECRET123');
    }
    expect(existsSync(join(t.project, '.ai', 'config', 'mcp', 'srv.yaml'))).toBe(false);
  });

  it('ENOTDIR and ENAMETOOLONG are typed errors, not internal errno text', async () => {
    const { t, r } = await setup();
    await mkdir(join(t.project, '.ai', 'tools'), { recursive: true });
    await writeFile(join(t.project, '.ai', 'tools', 'afile'), 'x');
    const notDir = await r.execute({ item_id: 'tool:afile/x' });
    expect(notDir).toMatchObject({ status: 'error', error_type: 'not_found' });
    const long = await r.execute({ item_id: `tool:${'a'.repeat(300)}` });
    expect(long).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(String(long.error)).toMatch(/too long/);
    const loadLong = await r.load({ item_id: `tool:${'a'.repeat(300)}` });
    expect(loadLong).toMatchObject({ status: 'error', error_type: 'validation' });
    await writeFile(join(t.project, 'plain.txt'), 'x');
    const toolNotDir = await r.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: 'plain.txt/inner' },
    });
    expect(toolNotDir.status).toBe('error');
    expect(String(toolNotDir.error)).not.toMatch(/ENOTDIR|ENAMETOOLONG/);
    const toolLong = await r.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: 'b'.repeat(300) },
    });
    expect(String(toolLong.error)).toMatch(/too long/);
    const lsDeep = await r.execute({
      item_id: 'tool:rye/file-system/ls',
      parameters: { path: 'b/'.repeat(2100) },
    });
    expect(lsDeep.status).toBe('error');
    expect(String(lsDeep.error)).not.toMatch(/ENAMETOOLONG/);
    const signLong = await r.sign(`tool:${'a'.repeat(300)}`);
    expect(signLong).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(JSON.stringify(signLong)).toMatch(/too long/);
    expect(JSON.stringify(signLong)).not.toMatch(/ENAMETOOLONG/);
  });
});

describe('the snapshot folder in the temp folder (issue 28, point 7)', () => {
  it('is protected from file tools as the one in the user space is, for a project at the temp folder', async () => {
    const { t } = await setup();
    const fallback = `ryeos-snapshots-${process.getuid?.() ?? 'user'}`;
    const probe = join(fallback, `probe-${process.pid}-${Date.now()}.js`);
    const atTmp = createRye({
      projectPath: tmpdir(),
      userSpace: t.user,
      env: { PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath },
    });
    try {
      const write = await atTmp.execute({
        item_id: 'tool:rye/file-system/write',
        parameters: { path: probe, content: 'planted' },
      });
      expect(write.status, JSON.stringify(write)).toBe('error');
      expect(String(write.error)).toMatch(/never touch/);
      expect(existsSync(join(tmpdir(), probe))).toBe(false);
    } finally {
      rmSync(join(tmpdir(), probe), { force: true });
    }
  });
});
