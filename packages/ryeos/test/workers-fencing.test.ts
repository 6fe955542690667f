/**
 * A worker that loses its thread stops with no effects (issue 32). A worker stalled past its
 * heartbeat (paused, starved) finds its thread taken up by another, which takes a new fencing
 * token; the stalled run asks before each model request and each tool call whether its token is
 * still the thread's, so once its call in flight returns it sends no request, runs no tool, and
 * records nothing: the row, the budget and the transcript stay the new run's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { processSettings } from '../src/settings.js';
import { useStepsFixture } from './workers-helpers.js';

const fixture = useStepsFixture();

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

const step = (tag: string, ms: number) => ({ name: 'acme_step', input: { tag, ms } });

function steps(project: string): string[] {
  const path = join(project, 'steps.log');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a queued run whose thread another worker took up', () => {
  it('sends no further request, runs no further tool and records nothing', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      const server = await fx.serve({
        per_conversation: true,
        turns: [
          { tool_calls: [step('slow', 1500)] },
          { tool_calls: [step('b', 10)] },
          { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
        ],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const forked = await fx.rye.execute({ item_id: 'directive:acme/steps', thread: 'fork', async: true });
      const threadId = String(forked.thread_id);
      const [queued] = await postgres.sql<{ payload: Record<string, unknown> }>(
        url,
        "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
        [threadId],
      );
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'stalled' }),
        projects: servedProjects([fx.project]),
      });
      const running = run(queued!.payload as never);
      await until(() => steps(fx.project).includes('started slow'), 30_000, 'the slow step to start');
      // What another worker's take-up does while this one is in its call: a new token, its name.
      await postgres.sql(
        url,
        "UPDATE ryeos.threads SET run_epoch = run_epoch + 1, worker_id = 'other', pid = 1 WHERE thread_id = $1",
        [threadId],
      );
      const before = await postgres.sql(
        url,
        'SELECT status, turns, spend, worker_id, result FROM ryeos.threads WHERE thread_id = $1',
        [threadId],
      );

      expect(await running).toEqual({ status: 'stopped: taken up by another worker' });
      expect(server.requests).toHaveLength(1);
      expect(steps(fx.project)).toEqual(['started slow', 'done slow']);
      expect(
        await postgres.sql(
          url,
          'SELECT status, turns, spend, worker_id, result FROM ryeos.threads WHERE thread_id = $1',
          [threadId],
        ),
      ).toEqual(before);
      expect(before[0]).toMatchObject({ status: 'running', worker_id: 'other' });
      // Not settled by the run that lost the thread; the response it was served stays charged.
      const [ledger] = await postgres.sql<{ status: string; actual_spend: string }>(
        url,
        'SELECT status, actual_spend FROM ryeos.budget_ledger WHERE thread_id = $1',
        [threadId],
      );
      expect(ledger!.status).toBe('active');
      expect(Number(ledger!.actual_spend)).toBeGreaterThan(0);
      const transcript = readFileSync(
        join(fx.project, '.ai', 'state', 'threads', threadId, 'transcript.jsonl'),
        'utf8',
      );
      // The call's result is not written by the run that lost the thread: the new run reports it.
      expect(transcript).not.toContain('"tool_call_result"');
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 60_000);
});
