/**
 * A tool process a managed thread runs learns the thread (`RYE_PARENT_THREAD_ID`), so what it runs
 * in turn through execute (a state graph's actions) stays within that thread's capabilities. A
 * project's `.env` cannot name another thread for it.
 */
import { describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const printThread =
  'version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: probe\nconfig:\n  command: "${RYE_KERNEL_NODE}"\n  args: ["-e", "console.log(JSON.stringify({ thread: process.env.RYE_PARENT_THREAD_ID ?? null }))"]\n';

describe('RYE_PARENT_THREAD_ID for a thread’s tool process', () => {
  it('is the calling thread’s id, over a value the project’s .env sets; absent outside a thread', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/probe/thread.yaml', printThread);
    const { writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    await writeFile(join(ws.project, '.env'), 'RYE_PARENT_THREAD_ID=someone-else\n');
    const executor = await ws.executor(toolEnv());
    expect(await executor.executeTool('probe/thread', {}, { parentThreadId: 'acme-look-1' })).toMatchObject({
      status: 'success',
      data: { thread: 'acme-look-1' },
    });
    const outside = await executor.executeTool('probe/thread');
    expect(outside).toMatchObject({ status: 'success' });
    expect((outside as { data: { thread: unknown } }).data.thread).not.toBe('acme-look-1');
  });
});
