/**
 * A real thread on the Postgres store: a host given `postgresStoreOpener` runs a directive with a
 * tool call through the scripted provider, and every registry and ledger row of the run, and the
 * queries after it, live in PostgreSQL (an embedded server this file starts), not in the project.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair } from '@ryeos/lillux';
import { postgresStoreOpener } from '@ryeos/store-postgres';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { createThreadHost, getThreadStatus, listThreads, runThread, signerFromKeyPair } from '@ryeos/threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';

const fixture = useLookFixture();
let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

describe('a thread on the Postgres store', () => {
  it('runs, settles its budget and is listed from PostgreSQL, with no registry.db in the project', async () => {
    const fx = fixture();
    await fx.serve(LOOK_SCRIPT);
    const connectionString = await postgres.createDatabase();
    try {
      const opener = postgresStoreOpener({ connectionString, workerId: 'test-worker.1' });
      const host = createThreadHost({
        executor: await fx.rye.executor(),
        projectPath: fx.project,
        signer: signerFromKeyPair(generateKeyPair()),
        store: opener,
        dispatch: async () => ({ status: 'success', results: [{ ref: 'knowledge:acme/notes' }] }),
      });

      const result = await runThread(host, { directiveId: 'acme/look' });

      expect(result, JSON.stringify(result)).toMatchObject({ success: true, status: 'completed' });
      const [row] = await postgres.sql<{ status: string; worker_id: string; turns: number }>(
        connectionString,
        'SELECT status, worker_id, turns FROM ryeos.threads WHERE thread_id = $1',
        [result.thread_id],
      );
      expect(row).toMatchObject({ status: 'completed', worker_id: 'test-worker.1', turns: 2 });
      const [budget] = await postgres.sql<{ status: string; max_spend: string }>(
        connectionString,
        'SELECT status, max_spend::text FROM ryeos.budget_ledger WHERE thread_id = $1',
        [result.thread_id],
      );
      expect(budget).toMatchObject({ status: 'completed', max_spend: '0.5' });
      expect((await listThreads(fx.project, {}, { store: opener })).map((t) => t.thread_id)).toEqual([
        result.thread_id,
      ]);
      expect(await getThreadStatus(fx.project, result.thread_id!, { store: opener })).toMatchObject({
        status: 'completed',
      });
      const threadsState = join(fx.project, '.ai', 'state', 'threads');
      expect(existsSync(join(threadsState, 'registry.db'))).toBe(false);
      expect(existsSync(join(threadsState, 'budget_ledger.db'))).toBe(false);
      expect(existsSync(join(threadsState, result.thread_id!, 'thread.json'))).toBe(true);
    } finally {
      await postgres.dropDatabase(connectionString);
    }
  });
});
