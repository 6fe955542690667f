// A long-lived host's kept-open stores: a lease behaves as a store of its own (the conformance
// suite runs on one), the connection outlives a lease, a dead thread is marked stale when the next
// lease starts, and a state folder that was replaced is opened again, never written through.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openThreadStore } from '../src/store/index.js';
import { keptOpenSqliteStores } from '../src/store/kept-open.js';
import { storeConformance } from '../src/testing.js';

const roots: string[] = [];
function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'rye-kept-open-'));
  roots.push(root);
  return root;
}
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

storeConformance(
  {
    name: 'SQLite, a kept-open lease',
    async create() {
      const root = mkdtempSync(join(tmpdir(), 'rye-store-conformance-kept-'));
      const stores = keptOpenSqliteStores({ idleMs: 5 });
      return {
        store: await stores.open(root),
        shared: { stateDir: join(root, '.ai', 'state', 'threads') },
        cleanup: async () => {
          await stores.closeIdle();
          rmSync(root, { recursive: true, force: true });
        },
      };
    },
    workerModule: join(import.meta.dirname, 'fixtures', 'sqlite-store-target.ts'),
    nodeArgs: ['--import', 'tsx'],
    cwd: join(import.meta.dirname, '..'),
  },
  { describe, it, beforeEach, afterEach },
);

describe('kept-open SQLite stores', () => {
  const wal = (root: string) => join(root, '.ai', 'state', 'threads', 'registry.db-wal');

  it('keeps the connection between leases and closes it once idle', async () => {
    const root = project();
    const stores = keptOpenSqliteStores({ idleMs: 20 });
    const first = await stores.open(root);
    await first.registry.register('a/one-1', 'a/one');
    await first.close();
    await first.close();
    // Still open: the log of an open WAL database stays; closing the last connection removes it.
    expect(existsSync(wal(root))).toBe(true);
    const second = await stores.open(root);
    expect((await second.registry.getThread('a/one-1'))?.directive).toBe('a/one');
    await second.close();
    await vi.waitFor(() => expect(existsSync(wal(root))).toBe(false), { timeout: 10_000, interval: 20 });
  });

  it('marks a thread whose process is gone when the next lease starts', async () => {
    const root = project();
    const stores = keptOpenSqliteStores({ idleMs: 1_000 });
    const lease = await stores.open(root);
    await lease.registry.register('a/dead-1', 'a/dead');
    await lease.registry.updateStatus('a/dead-1', 'running');
    // A pid no process has.
    await lease.registry.updatePid('a/dead-1', 2 ** 22 + 12_345);
    await lease.close();
    const next = await stores.open(root);
    expect((await next.registry.getThread('a/dead-1'))?.status).toBe('error');
    await next.close();
    await stores.closeIdle();
  });

  it('opens the store again when its folder was replaced, and writes to the new files', async () => {
    const root = project();
    const stores = keptOpenSqliteStores({ idleMs: 1_000 });
    const lease = await stores.open(root);
    await lease.registry.register('a/old-1', 'a/old');
    await lease.close();
    rmSync(join(root, '.ai', 'state'), { recursive: true, force: true });
    const next = await stores.open(root);
    await next.registry.register('a/new-1', 'a/new');
    await next.close();
    await stores.closeIdle();
    const fresh = openThreadStore(join(root, '.ai', 'state', 'threads'));
    expect((await fresh.registry.getThread('a/new-1'))?.directive).toBe('a/new');
    expect(await fresh.registry.getThread('a/old-1')).toBeUndefined();
    await fresh.close();
  });
});
