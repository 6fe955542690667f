/**
 * Cancel and kill from outside a thread (issue 15). The registry is bookkeeping a repository can
 * plant: kill must never signal a process that is not this project's thread runner.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CANCEL_MARKER, cancelThread, killThread } from '../src/orchestration/control.js';
import { threadsStateRoot } from '../src/persistence/paths.js';
import { openThreadStore } from '../src/store/index.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

async function project(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rye-control-'));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  return root;
}

describe('kill', () => {
  it('refuses a registry row whose pid is some other process of yours (a planted or stale row)', async () => {
    const root = await project();
    const other = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    other.unref();
    cleanup.push(() => {
      try {
        process.kill(-other.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    });
    const store = openThreadStore(threadsStateRoot(root));
    await store.registry.register('acme/x/x-1', 'acme/x');
    await store.registry.updateStatus('acme/x/x-1', 'running');
    await store.registry.updatePid('acme/x/x-1', other.pid!);
    store.close();
    const result = await killThread(root, 'acme/x/x-1', { graceMs: 100 });
    expect(result).toMatchObject({ success: false, killed: false });
    expect(result.error).toMatch(/not a ryeos thread runner/);
    expect(() => process.kill(other.pid!, 0)).not.toThrow();
  });

  it('refuses a thread that already ended, and an unknown one', async () => {
    const root = await project();
    const store = openThreadStore(threadsStateRoot(root));
    await store.registry.register('acme/x/x-2', 'acme/x');
    await store.registry.updateStatus('acme/x/x-2', 'completed');
    store.close();
    expect(await killThread(root, 'acme/x/x-2')).toMatchObject({ success: false, killed: false });
    expect(await killThread(root, 'acme/none')).toMatchObject({
      success: false,
      error: "Thread 'acme/none' not found",
    });
  });
});

describe('cancel', () => {
  it('marks the thread and its running descendants, and nothing that already ended', async () => {
    const root = await project();
    const stateRoot = threadsStateRoot(root);
    const store = openThreadStore(stateRoot, { markStale: false });
    for (const [id, parent, status] of [
      ['p/p-1', null, 'running'],
      ['c/c-1', 'p/p-1', 'running'],
      ['c/c-2', 'p/p-1', 'completed'],
      ['g/g-1', 'c/c-1', 'running'],
    ] as const) {
      await store.registry.register(id, id.split('/')[0]!, parent);
      await store.registry.updateStatus(id, status);
    }
    store.close();
    expect(await cancelThread(root, 'p/p-1')).toMatchObject({
      success: true,
      cancelled: ['p/p-1', 'c/c-1', 'g/g-1'],
    });
    expect(existsSync(join(stateRoot, 'g/g-1', CANCEL_MARKER))).toBe(true);
    expect(existsSync(join(stateRoot, 'c/c-2', CANCEL_MARKER))).toBe(false);
    expect(await cancelThread(root, 'c/c-2')).toMatchObject({ success: false });
  });
});
