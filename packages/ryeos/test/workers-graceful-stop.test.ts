/**
 * A `rye worker`'s graceful stop (issue 32): on SIGTERM a running thread ends its current turn
 * (the tool call in flight completes and its result is recorded), then goes back to the queue
 * unfinalized, and the worker exits; another worker takes the thread up from its transcript and
 * completes it, every call run once and none reported interrupted. A second SIGTERM stops a
 * worker at once, and its thread still ends on another.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';
import { useStepsFixture } from './workers-helpers.js';

const fixture = useStepsFixture();

let postgres: TestPostgres;
const started: ChildProcess[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const child of started) child.kill('SIGKILL');
  await postgres?.stop();
});

interface WorkerProcess {
  child: ChildProcess;
  log: string[];
  exited: Promise<number | null>;
}

function startWorker(
  id: string,
  url: string,
  env: Record<string, string>,
  project: string,
  flags: string[] = [],
): WorkerProcess {
  const child = spawn(process.execPath, [CLI, 'worker', '--worker-id', id, '--project', project, ...flags], {
    cwd: project,
    env: { ...env, RYE_DATABASE_URL: url },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  const log: string[] = [];
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => log.push(text));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, log, exited };
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const step = (tag: string, ms: number) => ({ name: 'acme_step', input: { tag, ms } });

function steps(project: string): string[] {
  const path = join(project, 'steps.log');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
}

async function threadRow(url: string, threadId: string) {
  const [row] = await postgres.sql<{ status: string; worker_id: string | null }>(
    url,
    'SELECT status, worker_id FROM ryeos.threads WHERE thread_id = $1',
    [threadId],
  );
  return row;
}

describe('rye worker on SIGTERM', () => {
  it('ends the current turn, hands the thread back, and another worker completes it', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    const workers: WorkerProcess[] = [];
    try {
      await fx.serve({
        per_conversation: true,
        turns: [
          { tool_calls: [step('a', 1500)] },
          { tool_calls: [step('b', 10)] },
          { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
        ],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const first = startWorker('first', url, fx.env, fx.project);
      workers.push(first);
      await until(() => first.log.join('').includes('started:'), 30_000, 'the first worker');
      const queued = await fx.rye.execute({ item_id: 'directive:acme/steps', thread: 'fork', async: true });
      const threadId = String(queued.thread_id);
      await until(() => steps(fx.project).includes('started a'), 30_000, 'step a to start');

      first.child.kill('SIGTERM');
      expect(await first.exited, first.log.join('')).toBe(0);
      // Its turn ended (the call in flight completed), and no further turn began on it.
      expect(steps(fx.project)).toEqual(['started a', 'done a']);
      expect(first.log.join('')).toMatch(/handed back after turn 1/);
      expect(await threadRow(url, threadId)).toEqual({ status: 'running', worker_id: null });
      const [job] = await postgres.sql<{ n: string }>(
        url,
        "SELECT count(*)::text AS n FROM graphile_worker.jobs WHERE key = 'thread:' || $1 AND locked_at IS NULL",
        [threadId],
      );
      expect(job!.n).toBe('1');

      const second = startWorker('second', url, fx.env, fx.project);
      workers.push(second);
      await until(async () => (await threadRow(url, threadId))?.status === 'completed', 60_000, 'completion');
      expect(await threadRow(url, threadId)).toEqual({ status: 'completed', worker_id: 'second' });
      expect(steps(fx.project)).toEqual(['started a', 'done a', 'started b', 'done b']);
      const transcript = readFileSync(
        join(fx.project, '.ai', 'state', 'threads', threadId, 'transcript.jsonl'),
        'utf8',
      );
      expect(transcript).not.toContain('"interrupted":true');
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
      await postgres.dropDatabase(url).catch(() => undefined);
    }
  }, 120_000);

  it('stops at once on a second SIGTERM; its thread ends on another worker', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    const workers: WorkerProcess[] = [];
    try {
      await fx.serve({
        per_conversation: true,
        turns: [
          { tool_calls: [step('slow', 20_000)] },
          { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
        ],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const first = startWorker('first', url, fx.env, fx.project);
      workers.push(first);
      await until(() => first.log.join('').includes('started:'), 30_000, 'the first worker');
      const queued = await fx.rye.execute({ item_id: 'directive:acme/steps', thread: 'fork', async: true });
      const threadId = String(queued.thread_id);
      await until(() => steps(fx.project).includes('started slow'), 30_000, 'the slow step to start');

      first.child.kill('SIGTERM');
      await until(() => first.log.join('').includes('stopping (SIGTERM)'), 10_000, 'the first stop');
      // Still finishing its turn: the slow call has 20 s to go.
      expect(first.child.exitCode).toBeNull();
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(1);
      expect(first.log.join('')).toContain('stopping at once');
      expect(steps(fx.project)).not.toContain('done slow');

      const second = startWorker('second', url, fx.env, fx.project);
      workers.push(second);
      await until(async () => (await threadRow(url, threadId))?.status === 'completed', 60_000, 'completion');
      const transcript = readFileSync(
        join(fx.project, '.ai', 'state', 'threads', threadId, 'transcript.jsonl'),
        'utf8',
      );
      // The call the stop cut short is reported to the model as interrupted, not run again.
      expect(transcript).toContain('"interrupted":true');
      expect(steps(fx.project).filter((line) => line === 'started slow')).toHaveLength(1);
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
      await postgres.dropDatabase(url).catch(() => undefined);
    }
  }, 120_000);

  it('hands a thread still in its turn back at once when --stop-grace is over', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    const workers: WorkerProcess[] = [];
    try {
      await fx.serve({
        per_conversation: true,
        turns: [
          { tool_calls: [step('slow', 60_000)] },
          { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
        ],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const first = startWorker('first', url, fx.env, fx.project, ['--stop-grace', '1']);
      workers.push(first);
      await until(() => first.log.join('').includes('started:'), 30_000, 'the first worker');
      const queued = await fx.rye.execute({ item_id: 'directive:acme/steps', thread: 'fork', async: true });
      const threadId = String(queued.thread_id);
      await until(() => steps(fx.project).includes('started slow'), 30_000, 'the slow step to start');

      first.child.kill('SIGTERM');
      // One signal: the grace ends the stop, not the minute the call in flight still has to go.
      expect(await first.exited, first.log.join('')).toBe(0);
      expect(steps(fx.project)).not.toContain('done slow');
      expect(first.log.join('')).toContain('stop grace over');
      const [job] = await postgres.sql<{ n: string }>(
        url,
        "SELECT count(*)::text AS n FROM graphile_worker.jobs WHERE key = 'thread:' || $1 AND locked_at IS NULL",
        [threadId],
      );
      expect(job!.n).toBe('1');

      const second = startWorker('second', url, fx.env, fx.project);
      workers.push(second);
      await until(async () => (await threadRow(url, threadId))?.status === 'completed', 60_000, 'completion');
      expect(steps(fx.project).filter((line) => line === 'started slow')).toHaveLength(1);
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
      await postgres.dropDatabase(url).catch(() => undefined);
    }
  }, 150_000);
});
