/**
 * Warm run plans (run-plan.ts): a tool's third call reuses what the first two resolved and
 * verified, and any change to what the plan rests on — the tool, a dependency, the runtime, the
 * trust store, a shadowing item, a folder swapped for a link — is seen by the very next call.
 * Every case first proves the plan was being reused, so that the change is what it catches.
 */
import { link, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { closeWorkers } from '@ryeos/lillux';
import { afterAll, describe, expect, it } from 'vitest';
import type { Executor } from '../src/executor.js';
import { runPlansOf } from '../src/run-plan.js';
import type { Workspace } from './helpers/workspace.js';
import { signText } from './helpers/workspace.js';
import { toolEnv, useWorkspaces } from './security/helpers.js';

const workspace = useWorkspaces();
afterAll(() => closeWorkers());

const TOOL = (body = 'return { success: true, n: params.n ?? 0 };', category = 'demo') =>
  [
    "export const __version__ = '1.0.0';",
    "export const __tool_type__ = 'javascript';",
    "export const __executor_id__ = 'rye/core/runtimes/node/function';",
    `export const __category__ = '${category}';`,
    "export const __tool_description__ = 'Demo';",
    `export async function execute(params) { ${body} }`,
    '',
  ].join('\n');

const dry = (executor: Executor, id = 'demo/echo') => executor.executeTool(id, { n: 1 }, { dryRun: true });

/** Calls until the plan is reused (the third call), and proves it was. */
async function warm(ws: Workspace, executor: Executor, id = 'demo/echo') {
  const plans = runPlansOf(executor, ws.project)!;
  for (let i = 0; i < 3; i++) expect(await dry(executor, id)).toMatchObject({ status: 'validation_passed' });
  const reused = plans.stats.reused;
  expect(await dry(executor, id)).toMatchObject({ status: 'validation_passed' });
  expect(plans.stats.reused).toBe(reused + 1);
  return plans;
}

async function setUp(files: Record<string, string> = {}) {
  const ws = await workspace();
  const tool = await ws.write('user', 'tools/demo/echo.js', TOOL());
  for (const [rel, text] of Object.entries(files)) await ws.write('user', rel, text);
  const executor = await ws.executor(toolEnv());
  return { ws, tool, executor };
}

describe('warm run plans', () => {
  it('a warm plan runs the tool and answers like a fresh one', async () => {
    const { ws, executor } = await setUp();
    const plans = await warm(ws, executor);
    const results = [];
    for (let n = 0; n < 3; n++) results.push(await executor.executeTool('demo/echo', { n }));
    expect(results.map((r) => (r as { data?: { n?: number } }).data?.n)).toEqual([0, 1, 2]);
    expect(plans.stats.reused).toBeGreaterThanOrEqual(4);
  });

  it('an unsigned edit of the tool fails the next call', async () => {
    const { ws, tool, executor } = await setUp();
    await warm(ws, executor);
    await writeFile(tool, TOOL('return { success: true, evil: true };'));
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it('a re-signed new version is what the next call verifies', async () => {
    const { ws, executor } = await setUp();
    await warm(ws, executor);
    type Detailed = { chain_detail: Array<{ integrity: string }> };
    const before = (await dry(executor)) as unknown as Detailed;
    await ws.write('user', 'tools/demo/echo.js', TOOL('return { success: true, v: 2 };'));
    const after = (await dry(executor)) as unknown as Detailed;
    expect(after.chain_detail[0]!.integrity).not.toBe(before.chain_detail[0]!.integrity);
  });

  it('a project item that now shadows the tool is the one resolved, even where no folder was', async () => {
    const { ws, executor } = await setUp();
    await rm(join(ws.project, '.ai'), { recursive: true, force: true });
    await warm(ws, executor);
    await ws.write('project', 'tools/demo/echo.js', TOOL('return { success: true, project: true };'));
    expect(await dry(executor)).toMatchObject({ chain_detail: [{ space: 'project' }, {}, {}] });
  });

  it('a revoked key fails the next call', async () => {
    const { ws, executor } = await setUp();
    await warm(ws, executor);
    await rm(join(ws.user, '.ai', 'config', 'keys', 'trusted'), { recursive: true });
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it('an unsigned file new in the anchor, or in a folder of it that was empty, fails the next call', async () => {
    const { ws, executor } = await setUp({ 'tools/demo/lib/util.js': 'export const x = 1;\n' });
    await writeFile(join(ws.user, '.ai', 'tools', 'demo', 'package.json'), '{}\n');
    await mkdir(join(ws.user, '.ai', 'tools', 'demo', 'empty'));
    await warm(ws, executor);
    await writeFile(join(ws.user, '.ai', 'tools', 'demo', 'empty', 'planted.js'), 'export const y = 2;\n');
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
    await rm(join(ws.user, '.ai', 'tools', 'demo', 'empty', 'planted.js'));
    await warm(ws, executor);
    await writeFile(join(ws.user, '.ai', 'tools', 'demo', 'lib', 'util.js'), 'export const x = 2;\n');
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it('a runtime edited in place fails the next call', async () => {
    const { ws, executor } = await setUp();
    await warm(ws, executor);
    const runtime = join(
      ws.system,
      '.ai',
      'tools',
      'rye',
      'core',
      'runtimes',
      'node',
      'lib',
      'function-worker.mjs',
    );
    await writeFile(runtime, '// rye:signed:forged\nconsole.log("pwned");\n');
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it("a tool's folder swapped for a link to another folder is seen by the next call", async () => {
    const { ws, executor } = await setUp();
    await warm(ws, executor);
    const other = join(ws.root, 'elsewhere');
    await mkdir(other);
    await writeFile(join(other, 'echo.js'), TOOL('return { success: true, swapped: true };'));
    await rename(join(ws.user, '.ai', 'tools', 'demo'), join(ws.root, 'moved'));
    await symlink(other, join(ws.user, '.ai', 'tools', 'demo'));
    expect(await dry(executor)).toMatchObject({ status: 'error' });
  });

  it('a space replaced as a whole (its .ai folder) is seen by the next call', async () => {
    const { ws, executor } = await setUp();
    await warm(ws, executor);
    await rename(join(ws.user, '.ai'), join(ws.user, '.ai-old'));
    await mkdir(join(ws.user, '.ai'));
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'not_found' });
  });

  it('a tool with a second hard link is never planned, so a write through the link is seen', async () => {
    const { ws, tool, executor } = await setUp();
    const alias = join(ws.root, 'alias.js');
    await link(tool, alias);
    const plans = runPlansOf(executor, ws.project)!;
    for (let i = 0; i < 4; i++) expect(await dry(executor)).toMatchObject({ status: 'validation_passed' });
    expect(plans.stats.reused).toBe(0);
    await writeFile(alias, signText(TOOL('return { x: 1 };'), alias, ws.bundleKey));
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it('a hard link made after the plan, and a write through it, are seen by the next call', async () => {
    const { ws, tool, executor } = await setUp();
    await warm(ws, executor);
    const alias = join(ws.root, 'alias.js');
    await link(tool, alias);
    await writeFile(alias, TOOL('return { success: true, evil: true };'));
    expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  describe('links below a root are never planned (a swap on their target side raises no notice here)', () => {
    /** Four calls, none of them served by a plan. */
    async function calls(ws: Workspace, executor: Executor) {
      for (let i = 0; i < 4; i++) expect(await dry(executor)).toMatchObject({ status: 'validation_passed' });
      expect(runPlansOf(executor, ws.project)!.stats.reused).toBe(0);
    }

    it('a searched folder that is a link: a shadowing item behind it is seen', async () => {
      const { ws, executor } = await setUp();
      const tools = join(ws.project, '.ai', 'tools');
      await mkdir(join(tools, 'a', 'b', 'demo'), { recursive: true });
      await symlink('a/b/demo', join(tools, 'demo'));
      await calls(ws, executor);
      await rename(join(tools, 'a', 'b'), join(tools, 'a', 'b-old'));
      await ws.write('project', 'tools/a/b/demo/echo.js', TOOL('return { success: true, project: true };'));
      expect(await dry(executor)).toMatchObject({ chain_detail: [{ space: 'project' }, {}, {}] });
    });

    it('a tool reached through a folder link: re-pointing the link to an unsigned copy is seen', async () => {
      const ws = await workspace();
      const tools = join(ws.user, '.ai', 'tools');
      await ws.write('user', 'tools/x/echo.js', TOOL());
      await mkdir(join(tools, 'y'));
      await writeFile(join(tools, 'y', 'echo.js'), TOOL('return { success: true, evil: true };'));
      await mkdir(join(tools, 'a'));
      await symlink('../x', join(tools, 'a', 'b'));
      await mkdir(join(tools, 'demo'));
      await symlink('../a/b/echo.js', join(tools, 'demo', 'echo.js'));
      const executor = await ws.executor(toolEnv());
      await calls(ws, executor);
      await rm(join(tools, 'a', 'b'));
      await symlink('../y', join(tools, 'a', 'b'));
      expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
    });

    it('a trust store that is a link: a revocation behind it is seen', async () => {
      const { ws, executor } = await setUp();
      const shared = join(ws.root, 'shared');
      const trusted = join(ws.user, '.ai', 'config', 'keys', 'trusted');
      await mkdir(join(shared, 'keys'), { recursive: true });
      await rename(trusted, join(shared, 'keys', 'trusted'));
      await symlink(join(shared, 'keys', 'trusted'), trusted);
      await calls(ws, executor);
      await mkdir(join(ws.root, 'shared-new', 'keys', 'trusted'), { recursive: true });
      await rename(shared, join(ws.root, 'shared-old'));
      await rename(join(ws.root, 'shared-new'), shared);
      expect(await dry(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
    });
  });

  it('RYE_PLAN_WATCH=0 turns plans off', async () => {
    const ws = await workspace();
    await ws.write('user', 'tools/demo/echo.js', TOOL());
    const { Executor: ExecutorClass } = await import('../src/executor.js');
    const { readSettings } = await import('../src/settings.js');
    const executor = await ExecutorClass.create({
      projectPath: ws.project,
      userSpace: ws.user,
      systemBundles: [{ id: 'test', root: ws.system }],
      settings: readSettings({ ...toolEnv(), RYE_PLAN_WATCH: '0' }, { userSpace: ws.user }),
    });
    for (let i = 0; i < 4; i++) expect(await dry(executor)).toMatchObject({ status: 'validation_passed' });
    expect(runPlansOf(executor, ws.project)).toBeUndefined();
  });
});
