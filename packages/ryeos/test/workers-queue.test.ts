/**
 * The run queue's edges (issue 32): with RYE_DATABASE_URL set an async fork is queued (its row
 * in PostgreSQL, no process started, no pid on it); the database is a trust boundary, so a job
 * whose setup was changed there, or that names a project the worker does not serve, is refused
 * and its thread recorded as failed; the job as queued runs, taken over from its caller. And
 * `rye worker` without a database says what to give it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { processSettings } from '../src/settings.js';
import { rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const returnCall = { name: 'rye_directive_return', input: { answer: 'done' } };

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

async function queuedJob(url: string, threadId: string): Promise<Record<string, unknown>> {
  const [job] = await postgres.sql<{ payload: Record<string, unknown> }>(
    url,
    "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
    [threadId],
  );
  expect(job, 'a queued job').toBeDefined();
  return job!.payload;
}

describe('async forks with RYE_DATABASE_URL', () => {
  it('are queued, a tampered job is refused, the job as queued runs on a worker', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve({ per_conversation: true, turns: [{ tool_calls: [returnCall] }] });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const first = await fx.rye.execute({ item_id: 'directive:acme/quick', thread: 'fork', async: true });
      expect(first, JSON.stringify(first)).toMatchObject({ status: 'success', async: true, queued: true });
      expect(first).not.toHaveProperty('pid');
      const threadId = String(first.thread_id);
      const [row] = await postgres.sql<{ status: string; pid: number | null; worker_id: string | null }>(
        url,
        'SELECT status, pid, worker_id FROM ryeos.threads WHERE thread_id = $1',
        [threadId],
      );
      expect(row).toEqual({ status: 'running', pid: null, worker_id: null });
      const job = await queuedJob(url, threadId);

      const settings = processSettings({ ...fx.env, RYE_DATABASE_URL: url, RYE_WORKER_ID: 'test-worker' });
      const run = jobRunner({ settings, projects: servedProjects([fx.project]) });

      // Written in the database: a capability the signed thread.json never granted.
      const prepared = job.prepared as { capabilities: string[] };
      const widened = {
        ...job,
        prepared: { ...prepared, capabilities: [...prepared.capabilities, 'rye.execute.tool.*'] },
      };
      const refused = await run(widened as never);
      expect(refused.status).toMatch(/^refused \(INTEGRITY: .*does not match its signed thread\.json/);

      // A second thread: its job as queued runs, and one for a project not served is refused.
      const second = await fx.rye.execute({ item_id: 'directive:acme/quick', thread: 'fork', async: true });
      const secondJob = await queuedJob(url, String(second.thread_id));
      const elsewhere = mkdtempSync(join(tmpdir(), 'rye-not-served-'));
      // Not this worker's to run: the job fails (and is retried, maybe by a worker that serves it).
      await expect(run({ ...secondJob, project_path: elsewhere } as never)).rejects.toMatchObject({
        code: 'PERMISSION',
      });
      const ran = await run(secondJob as never);
      expect(ran.status).toBe('completed');
      const rows = await postgres.sql<{ thread_id: string; status: string; worker_id: string | null }>(
        url,
        'SELECT thread_id, status, worker_id FROM ryeos.threads ORDER BY created_at',
      );
      expect(rows).toEqual([
        { thread_id: threadId, status: 'error', worker_id: null },
        { thread_id: String(second.thread_id), status: 'completed', worker_id: 'test-worker' },
      ]);
      // `rye threads list|wait` read the same database.
      const listed = await ryeCli(['threads', 'list'], { env: { ...fx.env }, cwd: fx.project });
      expect(listed.json, listed.stderr).toMatchObject({ status: 'success', count: 2 });
      const waited = await ryeCli(['threads', 'wait', String(second.thread_id)], {
        env: { ...fx.env },
        cwd: fx.project,
      });
      expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 60_000);
});

describe('a queued thread whose worker died while recording its end', () => {
  it('is ended as its settled ledger says when its job runs again, not left running', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve({ per_conversation: true, turns: [{ tool_calls: [returnCall] }] });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'test-worker' }),
        projects: servedProjects([fx.project]),
      });
      const forked = await fx.rye.execute({ item_id: 'directive:acme/quick', thread: 'fork', async: true });
      const threadId = String(forked.thread_id);
      const job = await queuedJob(url, threadId);
      expect(await run(job as never)).toEqual({ status: 'completed' });
      // Killed after its spend was settled and its result written, before its status: the
      // dead worker's job comes back to the queue and runs again.
      await postgres.sql(
        url,
        "UPDATE ryeos.threads SET status = 'running', completed_at = NULL WHERE thread_id = $1",
        [threadId],
      );
      const again = await run(job as never);
      expect(again.status).not.toBe('completed');
      const [row] = await postgres.sql<{ status: string }>(
        url,
        'SELECT status FROM ryeos.threads WHERE thread_id = $1',
        [threadId],
      );
      expect(row).toEqual({ status: 'completed' });
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 60_000);
});

describe('rye worker', () => {
  it('without a database says how to give it one', async () => {
    const result = await ryeCli(['worker'], { env: {} });
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).toContain('RYE_DATABASE_URL');
    expect(result.stderr + result.stdout).not.toMatch(/\n\s+at /);
  });

  it('refuses a --database-url with a password: every local user reads the command line', async () => {
    for (const url of [
      'postgres://rye:secret@127.0.0.1:1/ryeos',
      'postgresql://rye@127.0.0.1:1/ryeos?password=secret',
      'host=127.0.0.1 user=rye password=secret dbname=ryeos',
    ]) {
      const result = await ryeCli(['worker', '--database-url', url], { env: {} });
      expect(result.code, url).not.toBe(0);
      expect(result.stderr + result.stdout).toMatch(/validation/i);
      expect(result.stderr + result.stdout).toMatch(/RYE_DATABASE_URL.*PGPASSWORD/s);
      expect(result.stderr + result.stdout).not.toMatch(/\n\s+at /);
    }
    const help = await ryeCli(['help', 'worker'], { env: {} });
    expect(help.stdout).not.toContain('user:password@');
  });
});
