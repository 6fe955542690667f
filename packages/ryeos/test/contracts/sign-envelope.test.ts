/**
 * `Rye.sign` answers in the spec's shapes (interfaces §2.4, issue 11 item 4), never a throw:
 * one item → `{status:"signed", item_id, path, signature, warnings}` or `{status:"error", …}`;
 * a glob → `{status:"completed", signed, failed, total, summary}` (`error` when nothing signed).
 * `status:"error"` is exactly what MCP reports as `isError`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOperations, createRye } from '../../src/index.js';
import { rye as cli, useTempProjects } from '../helpers.js';

const project = useTempProjects();

const GOOD_SH =
  '# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "acme"\n# __tool_description__ = "Say hi"\necho hi\n';

describe('Rye.sign', () => {
  it('one item: the single shape, with the signature that was written', async () => {
    const t = await project();
    const rye = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });
    const noKey = await rye.sign('tool:acme/good');
    expect(noKey).toMatchObject({ status: 'error', error_type: 'config', item_id: 'tool:acme/good' });
    expect(noKey).toMatchObject({ error: expect.stringMatching(/No signing keypair/) });
    expect(noKey).not.toHaveProperty('signed');

    const { fingerprint } = await rye.generateKeys();
    const path = await t.write('tools/acme/good.sh', GOOD_SH);
    const signed = await rye.sign('tool:acme/good');
    expect(signed).toEqual({
      status: 'signed',
      item_id: 'tool:acme/good',
      path,
      location: 'project',
      signature: {
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        hash: expect.stringMatching(/^[a-f0-9]{64}$/),
        ed25519_sig: expect.stringMatching(/^[A-Za-z0-9_-]+==$/),
        pubkey_fp: fingerprint,
      },
      warnings: [],
      message: 'Tool validated and signed.',
    });
    if (signed.status !== 'signed') throw new Error('expected the single shape');
    const { signature } = signed;
    expect((await readFile(path, 'utf8')).split('\n')[0]).toBe(
      `# rye:signed:${signature.timestamp}:${signature.hash}:${signature.ed25519_sig}:${signature.pubkey_fp}`,
    );
    // A path names exactly one item too.
    expect(await rye.sign(path)).toMatchObject({ status: 'signed', item_id: 'tool:acme/good' });
  });

  it('one item that fails: status error with error_type and one issue per problem', async () => {
    const t = await project();
    const rye = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });
    await rye.generateKeys();
    const path = await t.write('tools/acme/bad.sh', '# __version__ = "one"\necho hi\n');
    expect(await rye.sign('tool:acme/bad')).toEqual({
      status: 'error',
      error: "Validation failed: version must be a version like 1.0.0, got 'one'; description is required",
      error_type: 'validation',
      item_id: 'tool:acme/bad',
      path,
      issues: ["version must be a version like 1.0.0, got 'one'", 'description is required'],
      hint: `Fix these problems in ${path}, then sign again.`,
    });
    expect(await rye.sign('tool:acme/good', { space: 'system' })).toMatchObject({
      status: 'error',
      error_type: 'permission',
      error: "Cannot sign in 'system' space",
    });
  });

  it('not found: says where it looked, with a hint', async () => {
    const t = await project();
    const rye = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });
    await rye.generateKeys();
    expect(await rye.sign('tool:nothing/here')).toEqual({
      status: 'error',
      error: 'Tool not found: nothing/here',
      error_type: 'not_found',
      item_id: 'tool:nothing/here',
      searched_in: [join(t.project, '.ai', 'tools')],
      hint: expect.stringMatching(/^Ensure the project path is the parent of the \.ai\/ directory/),
    });
    const none = await rye.sign('directive:nothing/*');
    expect(none).toMatchObject({
      status: 'error',
      error_type: 'not_found',
      error: "No directive items match 'nothing/*' in project space",
      searched_in: [join(t.project, '.ai', 'directives')],
      hint: expect.any(String),
      signed: [],
      failed: [],
      total: 0,
    });
  });

  it('a glob: the batch shape, skipping files that are not items (package.json)', async () => {
    const t = await project();
    const rye = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });
    await rye.generateKeys();
    await t.write('tools/acme/good.sh', GOOD_SH);
    const bad = await t.write('tools/acme/bad.sh', '# __version__ = "one"\necho hi\n');
    await t.write('tools/acme/package.json', '{"name": "acme-tools", "type": "module"}\n');
    await t.write(
      'tools/acme/lost.yaml',
      'version: "1.0.0"\ndescription: "x"\ncategory: acme\nexecutor_id: acme/runtimes/nowhere\n',
    );
    const batch = await rye.sign('tool:acme/*');
    expect(batch).toEqual({
      status: 'completed',
      signed: ['tool:acme/good', 'tool:acme/lost'],
      failed: [
        {
          item: 'tool:acme/bad',
          error:
            "Validation failed: version must be a version like 1.0.0, got 'one'; description is required",
          error_type: 'validation',
          path: bad,
          details: ["version must be a version like 1.0.0, got 'one'", 'description is required'],
          hint: expect.any(String),
        },
      ],
      total: 3,
      summary: 'Signed 2/3 items, 1 failed',
      warnings: [
        expect.stringMatching(/^tool:acme\/lost: executor_id 'acme\/runtimes\/nowhere' resolves to no tool/),
      ],
    });

    // Nothing signed: an error (isError over MCP), with the batch fields.
    const failed = await rye.sign('tool:acme/ba*');
    expect(failed).toMatchObject({
      status: 'error',
      error_type: 'validation',
      signed: [],
      total: 1,
      summary: 'Signed 0/1 items, 1 failed',
    });
    expect(failed).toMatchObject({ error: expect.stringMatching(/^tool:acme\/bad: Validation failed/) });
  });

  it('over MCP a single failure is isError-shaped and a success is not', async () => {
    const t = await project();
    const env = { USER_SPACE: t.user, PATH: process.env.PATH ?? '' };
    await createRye({ projectPath: t.project, env }).generateKeys();
    await t.write('tools/acme/good.sh', GOOD_SH);
    await t.write('tools/acme/bad.sh', '# __version__ = "one"\necho hi\n');
    const ops = createOperations({ env });
    const signal = new AbortController().signal;
    const good = await ops.sign(
      { item_id: 'acme/good', item_type: 'tool', project_path: t.project },
      { signal },
    );
    expect(good).toMatchObject({ status: 'signed', item_id: 'tool:acme/good' });
    const bad = await ops.sign({ item_id: 'tool:acme/bad', project_path: t.project }, { signal });
    expect(bad).toMatchObject({ status: 'error', error_type: 'validation', issues: expect.any(Array) });
  });

  it('the CLI exits 0 only when everything named was signed', async () => {
    const t = await project();
    expect((await cli(['keys', 'generate'], { env: t.env })).code).toBe(0);
    await t.write('tools/acme/good.sh', GOOD_SH);
    const one = await cli(['sign', 'tool:acme/good', '--project', t.project], { env: t.env });
    expect(one.code).toBe(0);
    expect(one.json).toMatchObject({ status: 'signed', item_id: 'tool:acme/good' });
    const all = await cli(['sign', 'tool:acme/*', '--project', t.project], { env: t.env });
    expect(all.code).toBe(0);
    expect(all.json).toMatchObject({ status: 'completed', failed: [], summary: 'Signed 1/1 items' });
    await t.write('tools/acme/bad.sh', '# __version__ = "one"\necho hi\n');
    const some = await cli(['sign', 'tool:acme/*', '--project', t.project], { env: t.env });
    expect(some.code).toBe(1);
    expect(some.json).toMatchObject({ status: 'completed', summary: 'Signed 1/2 items, 1 failed' });
  });
});
