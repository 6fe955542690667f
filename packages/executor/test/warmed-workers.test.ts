/**
 * Warm-only calls (warmed-workers.ts): once a tool's worker is alive and nothing its plan rests
 * on changed, warming it again does no work (not even a plan reuse); a changed tool, or a worker
 * that is gone, still takes the whole path: verified again, started again.
 */
import { writeFile } from 'node:fs/promises';
import { closeWorkers, warmWorkerCount } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor } from '../src/executor.js';
import { runPlansOf } from '../src/run-plan.js';
import type { Workspace } from './helpers/workspace.js';
import { toolEnv, useWorkspaces } from './security/helpers.js';

const workspace = useWorkspaces();
afterEach(() => closeWorkers());

const TOOL = (body = 'return { success: true };') =>
  [
    "export const __version__ = '1.0.0';",
    "export const __tool_type__ = 'javascript';",
    "export const __executor_id__ = 'rye/core/runtimes/node/function';",
    "export const __category__ = 'demo';",
    "export const __tool_description__ = 'Demo';",
    `export async function execute(params) { ${body} }`,
    '',
  ].join('\n');

const warmOnly = (executor: Executor) => executor.executeTool('demo/echo', {}, { warmOnly: true });

/** A tool whose plan is confirmed (reused by a fourth call) and whose worker a warm-only call started. */
async function warmTool() {
  const ws: Workspace = await workspace();
  const tool = await ws.write('user', 'tools/demo/echo.js', TOOL());
  const executor = await ws.executor(toolEnv());
  const plans = runPlansOf(executor, ws.project)!;
  for (let i = 0; i < 4; i++)
    expect(await executor.executeTool('demo/echo', {}, { dryRun: true })).toMatchObject({
      status: 'validation_passed',
    });
  expect(plans.stats.reused).toBeGreaterThan(0);
  expect(await warmOnly(executor)).toMatchObject({ status: 'success', data: { warmed: true } });
  expect(warmWorkerCount()).toBe(1);
  return { ws, tool, executor, plans };
}

describe('warm-only calls of a warm tool', () => {
  it('skip the plan and the preparation while the worker is alive and nothing changed', async () => {
    const { executor, plans } = await warmTool();
    const reused = plans.stats.reused;
    for (let i = 0; i < 3; i++)
      expect(await warmOnly(executor)).toMatchObject({
        status: 'success',
        chain: ['demo/echo', 'rye/core/runtimes/node/function', 'rye/core/primitives/subprocess'],
        data: { warmed: false },
      });
    expect(plans.stats.reused).toBe(reused);
    expect(warmWorkerCount()).toBe(1);
    // The real call still goes through its plan, and runs in that worker.
    expect(await executor.executeTool('demo/echo', {})).toMatchObject({ status: 'success' });
    expect(plans.stats.reused).toBe(reused + 1);
  });

  it('verify again when the tool was swapped since', async () => {
    const { tool, executor } = await warmTool();
    await writeFile(tool, TOOL('return { success: true, evil: true };'));
    expect(await warmOnly(executor)).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it('start the worker again once it is gone', async () => {
    const { executor } = await warmTool();
    await closeWorkers();
    expect(warmWorkerCount()).toBe(0);
    expect(await warmOnly(executor)).toMatchObject({ status: 'success', data: { warmed: true } });
    expect(warmWorkerCount()).toBe(1);
  });
});
