/**
 * `claimRun`: who may take a detached thread up. Its own runner, or a run started again after
 * that runner died; never a second run beside a live one, never a thread whose budget is settled.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimRun } from '../src/lifecycle/run-resume.js';
import { openThreadStore, type ThreadStore } from '../src/store/index.js';

let root: string;
let store: ThreadStore;
const ID = 'acme/steps/steps-1';

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-claim-'));
  store = openThreadStore(join(root, '.ai', 'state', 'threads'), { markStale: false });
  await store.registry.register(ID, 'acme/steps');
  await store.registry.updateStatus(ID, 'running');
  await store.ledger.register(ID, 1);
});

afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('claimRun', () => {
  it('takes up a thread whose recorded runner is gone, and records this process', async () => {
    await store.registry.updatePid(ID, deadPid());
    const claim = await claimRun(store, ID);
    expect((await store.registry.getThread(ID))?.pid).toBe(process.pid);
    claim.release();
  });

  it('refuses a second run of this process while the first holds the thread, and not after', async () => {
    await store.registry.updatePid(ID, process.pid);
    const [first, second] = await Promise.allSettled([claimRun(store, ID), claimRun(store, ID)]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'UNAVAILABLE' } });
    await expect(claimRun(store, ID)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    (first as PromiseFulfilledResult<{ release(): void }>).value.release();
    (await claimRun(store, ID)).release();
  });

  it('refuses a thread another live process runs, and leaves its row alone', async () => {
    const other = process.ppid;
    await store.registry.updatePid(ID, other);
    await expect(claimRun(store, ID)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await store.registry.getThread(ID)).toMatchObject({ status: 'running', pid: other });
  });

  it('refuses a thread whose budget is already settled (its end was being recorded)', async () => {
    await store.registry.updatePid(ID, deadPid());
    await store.ledger.settle(ID, 0.25, 'completed');
    await expect(claimRun(store, ID)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/already settled/),
    });
  });

  it('refuses a thread that is not running', async () => {
    await store.registry.updateStatus(ID, 'error');
    await expect(claimRun(store, ID)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
