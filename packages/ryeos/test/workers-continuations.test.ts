/**
 * Continuations through the run queue (issue 32): with RYE_DATABASE_URL set, `rye threads resume
 * --async` sets the continuation up (its signed thread.json, its chain linked) and queues it; a
 * worker runs it, checked against that signed record, and the chain reads from the database.
 */
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { processSettings } from '../src/settings.js';
import { rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const fixture = useThreadFixture(async (fx) => {
  await fx.write(
    '.ai/directives/acme/quick.md',
    directive('quick', {
      metadata:
        '<model tier="fast" provider="anthropic"/><limits spend="0.5"/><permissions><execute><tool>rye.file-system.read</tool></execute></permissions>',
      outputs: '<output name="answer" required="true">The answer</output>',
    }),
  );
  await fx.sign('directive:acme/quick');
});

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

const answer = (text: string) => ({
  tool_calls: [{ name: 'rye_directive_return', input: { answer: text } }],
});

describe('rye threads resume --async with RYE_DATABASE_URL', () => {
  it('queues the continuation, which a worker runs', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve({ turns: [answer('first'), answer('second')] });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const first = await fx.rye.execute({ item_id: 'directive:acme/quick', thread: 'fork' });
      expect(first, JSON.stringify(first)).toMatchObject({ status: 'success', outputs: { answer: 'first' } });
      const firstId = String(first.thread_id);

      const resumed = await ryeCli(['threads', 'resume', firstId, '--message', 'Once more', '--async'], {
        env: { ...fx.env },
        cwd: fx.project,
      });
      expect(resumed.json, resumed.stderr).toMatchObject({
        status: 'success',
        resumed: true,
        new_thread_result: { status: 'running', async: true },
      });
      const nextId = String((resumed.json as { new_thread_id: string }).new_thread_id);
      const [row] = await postgres.sql<{ status: string; pid: number | null }>(
        url,
        'SELECT status, pid FROM ryeos.threads WHERE thread_id = $1',
        [nextId],
      );
      expect(row).toEqual({ status: 'running', pid: null });

      const [job] = await postgres.sql<{ payload: Record<string, unknown> }>(
        url,
        "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
        [nextId],
      );
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'test-worker' }),
        projects: servedProjects([fx.project]),
      });
      expect(await run(job!.payload as never)).toEqual({ status: 'completed' });
      const chain = await ryeCli(['threads', 'chain', firstId], { env: { ...fx.env }, cwd: fx.project });
      expect(JSON.stringify(chain.json), chain.stderr).toContain(nextId);
      const waited = await ryeCli(['threads', 'wait', nextId], { env: { ...fx.env }, cwd: fx.project });
      expect(waited.code, waited.stdout + waited.stderr).toBe(0);
      expect(JSON.stringify(waited.json)).toContain('second');
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 90_000);
});
