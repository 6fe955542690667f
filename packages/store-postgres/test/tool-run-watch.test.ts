// An async tool run on one machine whose thread runs on another: the thread's pid means nothing
// here, so the run stops with its thread's line only when the store says the thread is gone (its
// worker's heartbeat), not because no local process has that pid.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchToolRun } from '@ryeos/threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresThreadStore, postgresStoreOpener } from '../src/index.js';
import { startPostgres, type TestPostgres } from '../src/testing.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

/** A pid no process here has (above the kernel's pid_max default). */
const PID_ELSEWHERE = 4_194_305;

describe("a tool run whose thread runs on another machine's worker", () => {
  it('goes on while that worker heartbeats, and stops once it is gone', async () => {
    const connectionString = await postgres.createDatabase();
    const projectPath = mkdtempSync(join(tmpdir(), 'rye-pg-watch-'));
    const elsewhere = await openPostgresThreadStore({
      connectionString,
      projectPath,
      workerId: 'machine-a',
      heartbeatMs: 200,
      staleAfterMs: 1000,
    });
    const opener = postgresStoreOpener({ connectionString, heartbeatMs: 200, staleAfterMs: 1000 });
    let stopped: string | undefined;
    let dispose: (() => void) | undefined;
    try {
      await elsewhere.registry.register('acme/p/p-1', 'acme/p');
      await elsewhere.registry.updateStatus('acme/p/p-1', 'running');
      await postgres.sql(connectionString, 'UPDATE ryeos.threads SET pid = $1', [PID_ELSEWHERE]);
      dispose = watchToolRun({
        projectPath,
        threadId: '00000000-0000-4000-8000-000000000001',
        parentThreadId: 'acme/p/p-1',
        store: opener,
        stop: (reason) => {
          stopped = reason;
        },
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(stopped).toBeUndefined();

      await elsewhere.close();
      const deadline = Date.now() + 10_000;
      while (!stopped && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(stopped).toMatch(/acme\/p\/p-1/);
    } finally {
      dispose?.();
      await elsewhere.close();
      rmSync(projectPath, { recursive: true, force: true });
      await postgres.dropDatabase(connectionString);
    }
  }, 60_000);
});
