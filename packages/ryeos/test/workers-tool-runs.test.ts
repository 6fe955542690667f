/**
 * Async tool runs through the run queue (issue 32): with RYE_DATABASE_URL set, `execute(tool,
 * async)` from the CLI, the API and a thread queues a job (its row in PostgreSQL, no process) that a
 * worker runs once, with the tool's chain verified there again. Cancel and wait work on it; a run
 * its worker died in is recorded as interrupted, never run twice; a job changed in the database
 * (another tool, a tool its thread was never granted) is refused.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { processSettings } from '../src/settings.js';
import { rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

/** Appends `ran <tag>` to marks.log. */
const MARK_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Note a run in marks.log';
export const CONFIG_SCHEMA = { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] };
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export async function execute(params, context) {
  appendFileSync(join(context.project_path, 'marks.log'), 'ran ' + params.tag + '\\n');
  return { success: true, tag: params.tag };
}
`;

const OUTPUTS = '<output name="answer" required="true">The answer</output>';

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/mark.js', MARK_TOOL);
  await fx.write('.ai/tools/acme/other.js', MARK_TOOL);
  await fx.sign('tool:acme/mark');
  await fx.sign('tool:acme/other');
  await fx.write(
    '.ai/directives/acme/starter.md',
    directive('starter', {
      metadata:
        '<model tier="fast" provider="anthropic"/><limits spend="0.5" spawns="3"/><permissions><execute><tool>acme.mark</tool></execute></permissions>',
      outputs: OUTPUTS,
    }),
  );
  await fx.sign('directive:acme/starter');
});

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

type Job = Record<string, unknown>;

async function queuedJob(url: string, threadId: string): Promise<Job> {
  const [job] = await postgres.sql<{ payload: Job }>(
    url,
    "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
    [threadId],
  );
  expect(job, 'a queued job').toBeDefined();
  return job!.payload;
}

async function row(url: string, threadId: string) {
  const [found] = await postgres.sql<{
    status: string;
    pid: number | null;
    parent_id: string | null;
    result: string | null;
  }>(url, 'SELECT status, pid, parent_id, result FROM ryeos.threads WHERE thread_id = $1', [threadId]);
  return (
    found && { ...found, result: found.result ? (JSON.parse(found.result) as Record<string, unknown>) : null }
  );
}

function marks(project: string): string[] {
  const path = join(project, 'marks.log');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
}

describe('async tool runs with RYE_DATABASE_URL', () => {
  it('are queued, run once on a worker, cancel and wait work, a tampered or interrupted run is not run', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve({ turns: [{ text: 'unused' }] }); // no model is called
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'test-worker' }),
        projects: servedProjects([fx.project]),
      });
      const launch = async (tag: string) => {
        const launched = await fx.rye.execute({
          item_id: 'tool:acme/mark',
          parameters: { tag },
          async: true,
        });
        expect(launched, JSON.stringify(launched)).toMatchObject({
          status: 'success',
          async: true,
          queued: true,
        });
        expect(launched).not.toHaveProperty('pid');
        return String(launched.thread_id);
      };

      // From the CLI: queued, and nothing runs until a worker takes it.
      const cli = await ryeCli(
        [
          'execute',
          'tool:acme/mark',
          '--params',
          JSON.stringify({ tag: 'cli' }),
          '--async',
          '--project',
          fx.project,
        ],
        { env: { ...fx.env }, cwd: fx.project },
      );
      expect(cli.json, cli.stderr).toMatchObject({ status: 'success', async: true, queued: true });
      const cliId = String((cli.json as { thread_id: string }).thread_id);
      expect(await row(url, cliId)).toMatchObject({ status: 'running', pid: null });
      expect(marks(fx.project)).toEqual([]);
      expect(await run((await queuedJob(url, cliId)) as never)).toEqual({ status: 'success' });
      expect(marks(fx.project)).toEqual(['ran cli']);
      const done = await row(url, cliId);
      expect(done?.status).toBe('completed');
      expect(done?.result).toMatchObject({ outputs: { data: { tag: 'cli' } } });
      const waited = await ryeCli(['threads', 'wait', cliId], { env: { ...fx.env }, cwd: fx.project });
      expect(waited.code, waited.stdout + waited.stderr).toBe(0);

      // Taken up by a worker that then died: it may have had its effect, so it is not run again.
      const lost = await launch('lost');
      const lostJob = await queuedJob(url, lost);
      await postgres.sql(
        url,
        "UPDATE ryeos.threads SET pid = 4242, worker_id = 'dead' WHERE thread_id = $1",
        [lost],
      );
      expect(await run(lostJob as never)).toEqual({ status: 'interrupted' });
      expect(await row(url, lost)).toMatchObject({
        status: 'error',
        result: { error: expect.stringMatching(/interrupted/) },
      });

      // Cancelled while queued: the worker never starts it.
      const cancelled = await launch('cancelled');
      const cancel = await ryeCli(['threads', 'cancel', cancelled], { env: { ...fx.env }, cwd: fx.project });
      expect(cancel.json, cancel.stderr).toMatchObject({ status: 'success', cancelled: [cancelled] });
      expect(await run((await queuedJob(url, cancelled)) as never)).toEqual({ status: 'cancelled' });
      expect((await row(url, cancelled))?.status).toBe('cancelled');

      // Another tool written into the job in the database: refused, recorded as failed.
      const swapped = await launch('swapped');
      const swappedJob = await queuedJob(url, swapped);
      const refused = await run({ ...swappedJob, item_id: 'tool:acme/other' } as never);
      expect(refused.status).toMatch(/^refused \(INTEGRITY: .*not the run its caller registered/);
      expect((await row(url, swapped))?.status).toBe('error');

      expect(marks(fx.project)).toEqual(['ran cli']);
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 90_000);

  it("a thread's run is queued as its child, and runs only as its signed record grants", async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve({
        turns: [
          {
            tool_calls: [
              {
                name: 'rye_execute',
                input: { item_id: 'tool:acme/mark', parameters: { tag: 'child' }, async: true },
              },
            ],
          },
          { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'started' } }] },
        ],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'test-worker' }),
        projects: servedProjects([fx.project]),
      });
      const parent = await fx.rye.execute({ item_id: 'directive:acme/starter', thread: 'fork', async: true });
      const parentId = String(parent.thread_id);
      expect(await run((await queuedJob(url, parentId)) as never)).toEqual({ status: 'completed' });
      const [child] = await postgres.sql<{ thread_id: string; status: string; pid: number | null }>(
        url,
        "SELECT thread_id, status, pid FROM ryeos.threads WHERE parent_id = $1 AND directive = 'tool/acme/mark'",
        [parentId],
      );
      expect(child).toMatchObject({ status: 'running', pid: null });
      const job = await queuedJob(url, child!.thread_id);
      expect(job.parent_thread_id).toBe(parentId);

      // The same job for a tool the thread was never granted (its row changed to match): refused.
      await postgres.sql(url, "UPDATE ryeos.threads SET directive = 'tool/acme/other' WHERE thread_id = $1", [
        child!.thread_id,
      ]);
      const forged = await run({ ...job, item_id: 'tool:acme/other' } as never);
      expect(forged.status).toMatch(/^refused \(INTEGRITY: .*not one thread .* may start/);
      expect(marks(fx.project)).toEqual([]);

      // The job as queued, on a fresh run row: runs once.
      await postgres.sql(
        url,
        "UPDATE ryeos.threads SET directive = 'tool/acme/mark', status = 'running', result = NULL, pid = NULL WHERE thread_id = $1",
        [child!.thread_id],
      );
      expect(await run(job as never)).toEqual({ status: 'success' });
      expect(marks(fx.project)).toEqual(['ran child']);
      expect((await row(url, child!.thread_id))?.result).toMatchObject({
        outputs: { data: { tag: 'child' } },
      });
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 90_000);
});
