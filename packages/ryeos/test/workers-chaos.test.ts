/**
 * Crash safety of the run queue (issue 32): three `rye worker` processes on one embedded
 * PostgreSQL run the children a parent forks against its budget (RYE_DATABASE_URL set, so the
 * forks are queued, not detached), each child making two scripted tool calls that append to a
 * log; one worker is SIGKILLed mid-run. Every child ends once, completed; the killed worker's
 * children finish on the others, resumed from their transcripts; no completed call runs twice;
 * every child's spend is exactly what its script cost, within the parent's budget.
 *
 * 24 children by default rather than the acceptance's 300: three workers, a parent and
 * PostgreSQL share two cores here, and 24 keeps eight children per worker (several in flight on
 * the killed one) in well under a minute. RYE_CHAOS_CHILDREN=300 runs the same assertions at full
 * size (the forks then come 50 a response).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { startReplayServer } from '@ryeos/threads/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

/** RYE_CHAOS_CHILDREN=300 runs it at the full size (a few minutes on two loaded cores). */
const CHILDREN = Number(process.env.RYE_CHAOS_CHILDREN ?? 24);
/** The parent's budget: room for every child's reservation at once, and a margin. */
const PARENT_SPEND = CHILDREN * 0.05 + 1;
/** A response may make 64 calls at most: the forks come 50 a turn. */
const FORK_TURNS = Math.ceil(CHILDREN / 50);
/** Each child's run, at worst, on two loaded cores with three workers of four slots. */
const TEST_MS = 90_000 + CHILDREN * 1500;

/** Appends `started <run>` and `done <run>` around a short wait; answers its run's unique id. */
const MARK_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Note a step in marks.log';
export const CONFIG_SCHEMA = { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] };

import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

export async function execute(params, context) {
  const log = join(context.project_path, 'marks.log');
  const run = 'run-' + randomUUID();
  appendFileSync(log, 'started ' + run + ' ' + process.pid + '\\n');
  await new Promise((resolve) => setTimeout(resolve, 400));
  appendFileSync(log, 'done ' + run + '\\n');
  return { success: true, run };
}
`;

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });
const CHILD_USAGE = { input_tokens: 1000, output_tokens: 100 };

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/mark.js', MARK_TOOL);
  await fx.sign('tool:acme/mark');
  await fx.write(
    '.ai/directives/acme/child.md',
    directive('child', {
      metadata:
        '<model tier="fast" provider="openai"/><limits spend="0.05" turns="6"/><permissions><execute><tool>acme.mark</tool></execute></permissions>',
      outputs: OUTPUTS,
    }),
  );
  await fx.sign('directive:acme/child');
  await fx.write(
    '.ai/directives/acme/parent.md',
    directive('parent', {
      metadata: `<model tier="fast" provider="anthropic"/><limits spend="${PARENT_SPEND}" spawns="${CHILDREN}" turns="${FORK_TURNS + 4}" duration_seconds="1800"/><permissions><execute><tool>rye.agent.threads.orchestrator</tool><tool>acme.mark</tool><directive>acme.child</directive></execute></permissions>`,
      outputs: OUTPUTS,
    }),
  );
  await fx.sign('directive:acme/parent');
});

let postgres: TestPostgres;
/** Every worker started, killed at the end even when a test timed out before its own cleanup. */
const started: ChildProcess[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const child of started) child.kill('SIGKILL');
  await postgres?.stop();
});

interface WorkerProcess {
  id: string;
  child: ChildProcess;
  log: string[];
}

function startWorkerProcess(id: string, url: string, env: Record<string, string>, project: string) {
  const child = spawn(
    process.execPath,
    [CLI, 'worker', '--worker-id', id, '--concurrency', '4', '--project', project],
    // The URL carries a password: never on a command line.
    { cwd: project, env: { ...env, RYE_DATABASE_URL: url }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  started.push(child);
  const worker: WorkerProcess = { id, child, log: [] };
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => worker.log.push(text));
  return worker;
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('three workers, one SIGKILLed mid-run', () => {
  it(
    'every child ends once and completed, spend exact, no completed tool call run twice',
    async () => {
      const fx = fixture();
      const url = await postgres.createDatabase();
      const children = await startReplayServer({
        per_conversation: true,
        turns: [
          { tool_calls: [{ name: 'acme_mark', input: { tag: 'a' } }], usage: CHILD_USAGE },
          { tool_calls: [{ name: 'acme_mark', input: { tag: 'b' } }], usage: CHILD_USAGE },
          { tool_calls: [returnCall('child done')], usage: CHILD_USAGE },
        ],
      });
      fx.env.OPENAI_BASE_URL = `${children.url}/v1`;
      fx.env.OPENAI_API_KEY = 'test-key';
      const fork = {
        name: 'rye_execute',
        input: { item_id: 'directive:acme/child', thread: 'fork', async: true },
      };
      await fx.serve({
        turns: [
          ...Array.from({ length: FORK_TURNS }, (_, i) => ({
            tool_calls: Array.from({ length: Math.min(50, CHILDREN - i * 50) }, () => fork),
          })),
          {
            tool_calls: [
              {
                name: 'rye_agent_threads_orchestrator',
                input: { operation: 'wait_threads', timeout: TEST_MS / 1000 },
                input_from_results: { key: 'thread_ids', field: 'thread_id' },
              },
            ],
          },
          { tool_calls: [returnCall('all done')] },
        ],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const workers = ['w1', 'w2', 'w3'].map((id) => startWorkerProcess(id, url, { ...fx.env }, fx.project));
      try {
        await until(() => workers.every((w) => w.log.join('').includes('started:')), 30_000, 'workers');
        const parent = fx.rye.execute({ item_id: 'directive:acme/parent', thread: 'fork' });

        // The victim is killed once it holds running children and some calls have completed.
        const victim = workers[1]!;
        const victimsRunning = async () =>
          (
            await postgres.sql<{ thread_id: string }>(
              url,
              "SELECT thread_id FROM ryeos.threads WHERE worker_id = 'w2' AND status = 'running'",
            )
          ).map((row) => row.thread_id);
        let killedHeld: string[] = [];
        await until(
          async () => {
            killedHeld = await victimsRunning();
            return killedHeld.length >= 2;
          },
          40_000,
          'w2 to run children',
        );
        victim.child.kill('SIGKILL');
        await new Promise((resolve) => victim.child.once('exit', resolve));

        const result = await parent;
        expect(result, JSON.stringify(result)).toMatchObject({
          status: 'success',
          outputs: { answer: 'all done' },
        });
        const parentId = String(result.thread_id);

        const rows = await postgres.sql<{ thread_id: string; status: string; worker_id: string | null }>(
          url,
          'SELECT thread_id, status, worker_id FROM ryeos.threads WHERE parent_id = $1',
          [parentId],
        );
        expect(rows).toHaveLength(CHILDREN);
        const workerLogs = workers.map((w) => w.log.join('')).join('\n');
        expect(
          rows.filter((row) => row.status !== 'completed'),
          workerLogs,
        ).toEqual([]);
        // The killed worker's children finished on the others, resumed from their transcripts (one
        // seen running may have been finishing as the kill came: it completed on w2 itself).
        const resumed = killedHeld.filter(
          (id) => rows.find((row) => row.thread_id === id)?.worker_id !== 'w2',
        );
        expect(resumed.length).toBeGreaterThanOrEqual(1);
        // A call the kill cut short is answered as interrupted, never run again as if completed.
        const interrupted = resumed.filter((id) =>
          readFileSync(join(fx.project, '.ai', 'state', 'threads', id, 'transcript.jsonl'), 'utf8').includes(
            '"interrupted":true',
          ),
        );
        expect(interrupted.length).toBeLessThanOrEqual(resumed.length);
        const jobs = await postgres.sql<{ n: string }>(
          url,
          'SELECT count(*)::text AS n FROM graphile_worker.jobs',
        );
        expect(jobs[0]!.n).toBe('0');

        // Spend: each child exactly its three scripted responses, whether or not it was resumed.
        const ledger = await postgres.sql<{ thread_id: string; actual: string; status: string }>(
          url,
          'SELECT thread_id, actual_spend::text AS actual, status FROM ryeos.budget_ledger WHERE parent_thread_id = $1',
          [parentId],
        );
        expect(ledger).toHaveLength(CHILDREN);
        const spends = new Set(ledger.map((row) => Number(row.actual).toFixed(6)));
        expect(spends.size, JSON.stringify(ledger)).toBe(1);
        const each = Number(ledger[0]!.actual);
        expect(each).toBeGreaterThan(0);
        const total = ledger.reduce((sum, row) => sum + Math.round(Number(row.actual) * 1e6), 0);
        expect(total).toBe(Math.round(each * 1e6) * CHILDREN);
        expect(total / 1e6).toBeLessThanOrEqual(PARENT_SPEND);
        const [tree] = await postgres.sql<{ children: string }>(
          url,
          'SELECT COALESCE(SUM(actual_spend), 0)::text AS children FROM ryeos.budget_ledger WHERE parent_thread_id = $1',
          [parentId],
        );
        expect(Math.round(Number(tree!.children) * 100)).toBe(Math.round((total / 1e6) * 100));

        // Tool runs: every completed run's id is in exactly one child's transcript, and none ran twice.
        const log = readFileSync(join(fx.project, 'marks.log'), 'utf8').split('\n').filter(Boolean);
        const done = log.filter((line) => line.startsWith('done ')).map((line) => line.split(' ')[1]!);
        expect(new Set(done).size).toBe(done.length);
        const recorded = new Set<string>();
        for (const row of rows) {
          const transcript = readFileSync(
            join(fx.project, '.ai', 'state', 'threads', row.thread_id, 'transcript.jsonl'),
            'utf8',
          );
          const runs = new Set(transcript.match(/run-[0-9a-f-]{36}/g) ?? []);
          // Two calls each; one the kill cut short was answered as interrupted and not run again.
          const cut = transcript.split('"interrupted":true').length - 1;
          expect(runs.size, row.thread_id).toBe(2 - cut);
          for (const run of runs) {
            expect(recorded.has(run)).toBe(false);
            recorded.add(run);
          }
        }
        // A run that completed but whose result the killed worker never recorded is the one that
        // may show in the log without a transcript (its call was reported as interrupted).
        const unrecorded = done.filter((run) => !recorded.has(run));
        expect(unrecorded.length).toBeLessThanOrEqual(killedHeld.length);
        expect(done.length).toBe(recorded.size + unrecorded.length);
      } finally {
        for (const worker of workers) worker.child.kill('SIGKILL');
        await children.close();
        await postgres.dropDatabase(url).catch(() => undefined);
      }
    },
    TEST_MS,
  );
});
