/**
 * Starting a detached run (spec threads §11): the child gets its request before its caller says
 * "running", a child that does not take it is killed, and a thread whose runner gave up is marked
 * error with its reservation released.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  abandonThread,
  openThreadStore,
  spawnDetached,
  startDetached,
  threadsStateRoot,
} from '../src/index.js';

let root: string;
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-spawn-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function launch(script: string) {
  return {
    node: process.execPath,
    args: ['-e', script],
    env: { PATH: process.env.PATH ?? '' },
    logPath: join(root, 'spawn.log'),
    cwd: root,
  };
}

describe('detached runs', () => {
  it('resolves once the child has its request, however large', async () => {
    const input = 'x'.repeat(1 << 20);
    const pid = await spawnDetached({
      ...launch("let n=0;process.stdin.on('data',c=>n+=c.length).on('end',()=>console.log('got',n))"),
      input,
    });
    expect(pid).toBeGreaterThan(0);
    for (let i = 0; i < 100 && !readFileSync(join(root, 'spawn.log'), 'utf8').includes('got'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(readFileSync(join(root, 'spawn.log'), 'utf8')).toContain(`got ${input.length}`);
  });

  it('a child that exits before taking its request fails the hand-over', async () => {
    const child = await startDetached(launch('process.exit(3)'));
    await expect(child.send('y'.repeat(1 << 20))).rejects.toThrow(/did not take its request/);
  });

  it('records the pid before the hand-over; a failure there kills the child', async () => {
    let recorded = 0;
    await expect(
      spawnDetached({ ...launch('setTimeout(()=>{},60000)'), input: '{}' }, (pid) => {
        recorded = pid;
        throw new Error('registry locked');
      }),
    ).rejects.toThrow('registry locked');
    expect(recorded).toBeGreaterThan(0);
    for (let i = 0; i < 50 && alive(recorded); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(recorded)).toBe(false);
  });

  it('abandonThread marks a running thread error and releases its reservation, and nothing else', async () => {
    const project = join(root, 'project');
    mkdirSync(join(project, '.ai'), { recursive: true });
    const store = openThreadStore(threadsStateRoot(project));
    try {
      await store.registry.register('d/run-1', 'd', null);
      await store.registry.updateStatus('d/run-1', 'running');
      await store.ledger.register('d/run-1', 1);
      await store.registry.register('d/done-1', 'd', null);
      await store.registry.updateStatus('d/done-1', 'cancelled');
    } finally {
      store.close();
    }
    expect(await abandonThread(project, 'd/run-1', 'The detached runner failed: boom')).toBe(true);
    expect(await abandonThread(project, 'd/done-1', 'no')).toBe(false);
    expect(await abandonThread(project, 'd/missing', 'no')).toBe(false);
    const after = openThreadStore(threadsStateRoot(project));
    try {
      expect(await after.registry.getThread('d/run-1')).toMatchObject({
        status: 'error',
        result: { error: 'The detached runner failed: boom' },
      });
      expect((await after.ledger.get('d/run-1'))?.status).toBe('error');
      expect((await after.registry.getThread('d/done-1'))?.status).toBe('cancelled');
    } finally {
      after.close();
    }
  });
});
