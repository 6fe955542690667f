/**
 * Threads taken up on "another machine" (issue 32): a worker that never had a thread's folder
 * resumes it from the copies of its signed thread.json and transcript kept in PostgreSQL. Here
 * the other machine is the same checkout with its thread folders gone. A copy changed in the
 * database does not verify, and the thread is not run from it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { processSettings } from '../src/settings.js';
import { CLI, rye as ryeCli } from './helpers.js';
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

function startWorker(id: string, url: string, env: Record<string, string>, project: string) {
  const child = spawn(process.execPath, [CLI, 'worker', '--worker-id', id, '--project', project], {
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
const SCRIPT = {
  per_conversation: true,
  turns: [
    { tool_calls: [step('a', 1200)] },
    { tool_calls: [step('b', 10)] },
    { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
  ],
};

function steps(project: string): string[] {
  const path = join(project, 'steps.log');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
}

async function threadRow(url: string, threadId: string) {
  const [row] = await postgres.sql<{ status: string; worker_id: string | null; result: string | null }>(
    url,
    'SELECT status, worker_id, result FROM ryeos.threads WHERE thread_id = $1',
    [threadId],
  );
  return row;
}

/** This machine loses every thread folder, as a machine that never ran them. */
function forgetThreadFolders(project: string, as: string): void {
  const threads = join(project, '.ai', 'state', 'threads');
  renameSync(threads, `${threads}-${as}`);
}

describe('a thread taken up by a worker without its folder', () => {
  it('resumes from the signed copies in PostgreSQL and completes', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve(SCRIPT);
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const first = startWorker('machine-a', url, fx.env, fx.project);
      await until(() => first.log.join('').includes('started:'), 30_000, 'machine a');
      const queued = await fx.rye.execute({ item_id: 'directive:acme/steps', thread: 'fork', async: true });
      const threadId = String(queued.thread_id);
      await until(() => steps(fx.project).includes('started a'), 30_000, 'step a');
      first.child.kill('SIGTERM');
      expect(await first.exited, first.log.join('')).toBe(0);
      expect(first.log.join('')).toMatch(/handed back after turn 1/);

      forgetThreadFolders(fx.project, 'machine-a');
      const second = startWorker('machine-b', url, fx.env, fx.project);
      await until(async () => (await threadRow(url, threadId))?.status === 'completed', 60_000, 'completion');
      second.child.kill('SIGTERM');
      expect(await threadRow(url, threadId)).toMatchObject({ status: 'completed', worker_id: 'machine-b' });
      expect(steps(fx.project)).toEqual(['started a', 'done a', 'started b', 'done b']);
      // Machine b's folder holds the thread's whole signed record, its first turn restored.
      const shown = await fx.rye.execute({
        item_id: 'tool:rye/agent/threads/orchestrator',
        parameters: { operation: 'read_transcript', thread_id: threadId },
      });
      expect(JSON.stringify(shown)).toContain('acme_step');
      const transcript = readFileSync(
        join(fx.project, '.ai', 'state', 'threads', threadId, 'transcript.jsonl'),
        'utf8',
      );
      expect(transcript).toContain('"tag":"a"');
      expect(transcript).not.toContain('"interrupted":true');
      const shownRecord = await ryeCli(['threads', 'show', threadId], {
        env: { ...fx.env },
        cwd: fx.project,
      });
      expect(shownRecord.json, shownRecord.stderr).toMatchObject({ integrity: { valid: true } });
    } finally {
      await postgres.dropDatabase(url).catch(() => undefined);
    }
  }, 120_000);

  it('refuses a transcript copy changed in the database', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve(SCRIPT);
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const run = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'machine-a' }),
        projects: servedProjects([fx.project]),
      });
      const queued = await fx.rye.execute({ item_id: 'directive:acme/steps', thread: 'fork', async: true });
      const threadId = String(queued.thread_id);
      const [job] = await postgres.sql<{ payload: Record<string, unknown> }>(
        url,
        "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
        [threadId],
      );
      // Machine a runs the first turn and hands the thread back.
      const stopping = new AbortController();
      const ran = run(job!.payload as never, { stopping: stopping.signal });
      await until(() => steps(fx.project).includes('started a'), 30_000, 'step a');
      stopping.abort();
      expect(await ran).toMatchObject({ requeue: true });

      // In the database, the recorded answer of step a is changed.
      await postgres.sql(
        url,
        `UPDATE ryeos.thread_records SET content = convert_to(replace(convert_from(content, 'UTF8'), '"tag":"a"', '"tag":"x"'), 'UTF8')
         WHERE thread_id = $1 AND name = 'transcript.jsonl'`,
        [threadId],
      );
      forgetThreadFolders(fx.project, 'machine-a');
      const machineB = jobRunner({
        settings: processSettings({ ...fx.env, RYE_WORKER_ID: 'machine-b' }),
        projects: servedProjects([fx.project]),
      });
      const outcome = await machineB(job!.payload as never, {});
      expect(outcome.status).not.toBe('completed');
      const row = await threadRow(url, threadId);
      expect(row?.status).toBe('error');
      expect(row?.result ?? '').toMatch(/verif|signature|checkpoint|integrity/i);
      expect(steps(fx.project)).toEqual(['started a', 'done a']);
    } finally {
      await postgres.dropDatabase(url).catch(() => undefined);
    }
  }, 120_000);
});
