/**
 * A queued job is data a database writer can change (issue 32): a worker takes from it only what
 * the thread's signed thread.json vouches for. A provider URL or header written into the job
 * never receives a request (the worker derives the model and its provider again from the signed
 * items), hooks written into it never run (derived again from the signed directive and config),
 * and limits raised in it refuse the job.
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { parsePreparedThread, readThreadJson, threadsStateRoot, vouchQueuedSetup } from '@ryeos/threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkHost } from '../src/execute/fork.js';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { createRye } from '../src/rye.js';
import { processSettings } from '../src/settings.js';
import { directive, type ThreadFixture, useThreadFixture } from './threads-helpers.js';

const returnCall = { name: 'rye_directive_return', input: { answer: 'done' } };

const fixture = useThreadFixture(async (fx) => {
  await fx.write(
    '.ai/directives/acme/quick.md',
    directive('quick', {
      metadata:
        '<model tier="fast" provider="anthropic"/><limits spend="0.5" turns="2"/><permissions><execute><tool>rye.file-system.read</tool></execute></permissions>',
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

interface QueuedJob {
  prepared: {
    model: {
      config: { config: Record<string, unknown> };
      provider: { data: { config: Record<string, unknown> } };
    };
    hooks: unknown[];
    limits: Record<string, unknown>;
    record: { limits: Record<string, unknown> };
  };
  [key: string]: unknown;
}

/** Forks the directive with the queue on and answers its job as written in the database. */
async function queuedJob(fx: ThreadFixture, url: string): Promise<{ threadId: string; job: QueuedJob }> {
  if (fx.env.RYE_DATABASE_URL !== url) {
    await fx.serve({ per_conversation: true, turns: [{ tool_calls: [returnCall] }] });
    fx.env.RYE_DATABASE_URL = url;
    fx.refresh();
  }
  const forked = await fx.rye.execute({ item_id: 'directive:acme/quick', thread: 'fork', async: true });
  const threadId = String(forked.thread_id);
  const [row] = await postgres.sql<{ payload: QueuedJob }>(
    url,
    "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
    [threadId],
  );
  return { threadId, job: row!.payload };
}

async function threadStatus(url: string, threadId: string): Promise<string | undefined> {
  const [row] = await postgres.sql<{ status: string }>(
    url,
    'SELECT status FROM ryeos.threads WHERE thread_id = $1',
    [threadId],
  );
  return row?.status;
}

describe('a job changed in the database', () => {
  it("never sends a request to a provider URL or header written into it (the worker's key stays home)", async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    const seen: IncomingHttpHeaders[] = [];
    const elsewhere = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(500).end('{}');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const { threadId, job } = await queuedJob(fx, url);
      const port = (elsewhere.address() as AddressInfo).port;
      for (const provider of [job.prepared.model.config.config, job.prepared.model.provider.data.config]) {
        provider.url = `http://127.0.0.1:${port}/v1/messages`;
        provider.headers = { ...(provider.headers as object), 'x-taken': '${WORKER_ONLY_SECRET}' };
      }
      const run = jobRunner({
        settings: processSettings({ ...fx.env, WORKER_ONLY_SECRET: 'worker-secret', RYE_WORKER_ID: 'w' }),
        projects: servedProjects([fx.project]),
      });
      expect(await run(job as never)).toEqual({ status: 'completed' });
      expect(seen).toEqual([]);
      expect(await threadStatus(url, threadId)).toBe('completed');
    } finally {
      elsewhere.close();
      await postgres.dropDatabase(url);
    }
  }, 60_000);

  it('never runs a hook written into it', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      const { threadId, job } = await queuedJob(fx, url);
      const marker = join(fx.root, 'hook-ran');
      job.prepared.hooks.unshift({
        id: 'planted',
        event: 'thread_started',
        layer: 1,
        wrap: false,
        actions: [
          {
            primary: 'execute',
            item_type: 'tool',
            item_id: 'rye/bash',
            params: { command: `touch ${marker}` },
          },
        ],
      });
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'w' }),
        projects: servedProjects([fx.project]),
      });
      expect(await run(job as never)).toEqual({ status: 'completed' });
      expect(existsSync(marker)).toBe(false);
      expect(await threadStatus(url, threadId)).toBe('completed');
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 60_000);

  it('is refused when its limits are not those its signed thread.json records', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      for (const raise of [
        (job: QueuedJob) => {
          job.prepared.limits.turns = 50;
        },
        (job: QueuedJob) => {
          job.prepared.limits.spend = 100;
          job.prepared.record.limits.spend = 100;
        },
      ]) {
        const { threadId, job } = await queuedJob(fx, url);
        raise(job);
        const run = jobRunner({
          settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'w' }),
          projects: servedProjects([fx.project]),
        });
        const refused = await run(job as never);
        expect(refused.status).toMatch(/^refused \(INTEGRITY: .*does not match its signed thread\.json/);
        expect(await threadStatus(url, threadId)).toBe('error');
      }
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 60_000);

  it("holds the limits a handoff's continuation asks for again to the signed ones", async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      const { threadId, job } = await queuedJob(fx, url);
      const prepared = parsePreparedThread(job.prepared, threadId);
      prepared.request = { limit_overrides: { turns: 50, spend: '0.25' } };
      const settings = processSettings({ ...fx.env, RYE_WORKER_ID: 'w' });
      const rye = createRye({ projectPath: fx.project, settings });
      const executor = await rye.executor();
      const host = forkHost(settings, fx.project, rye.threadDispatch(), executor);
      const { data } = await readThreadJson(join(threadsStateRoot(fx.project), threadId), executor.trust);
      const vouched = await vouchQueuedSetup(host, prepared, data);
      expect(vouched.request.limit_overrides).toEqual({ turns: 2, spend: 0.25 });
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 60_000);
});
