// Orchestration (issue 15): detached threads, through the facade, against the replay server on
// 127.0.0.1. Printed:
//  (a) detached spawn latency: `rye.execute({item_id, thread: 'fork', async: true})` called → the
//      child process runs its loop, i.e. the replay server receives its first model request
//      (`receivedAt`, same clock); median over RUNS spawns (goal < 300 ms). Measured as a
//      long-lived host sees it (the facade keeps a spare runner started after an async fork), and
//      again with `spareRunner: false` (every runner started at the call, as the one-shot CLI
//      does). Also, for the first: call → the
//      execute call returned (the caller's part: the runner started first, then setup, signed
//      records, the setup handed over), and returned → first request (what is left of the
//      runner's start once the caller is done: it loads while the caller sets the thread up).
//  (b) wait latency: `waitThreads(project, [id])` started while the child is in its model call
//      (its final event held HOLD_MS) → the wait resolves, minus the moment the child wrote its
//      final status: the registry row's `completed_at` (ISO with milliseconds, taken just before
//      the status UPDATE commits); median over RUNS (goal < 100 ms). For scale, also from the
//      child's `thread_completed` transcript event (written after the status and the signed
//      thread.json, so it can come after the wait resolved) and from the final SSE event sent.
//  (c) a child: a parent thread's model calls `rye_execute` on a directive with `async: true` (the
//      orchestrator path) → the child's first model request; from the parent's tool call (the
//      final SSE event of the answer that asked for it; the parent's and the child's replay
//      servers share this clock). Twice: the parent in this process (a long-lived host: the MCP
//      server, an application), one parent thread per child; and the parent detached (its own
//      runner process, which sets its children up), one parent per child, so each child is the
//      first its parent's process sets up: once with the parent's model answering at once, and
//      once with it taking THINK_MS for the answer that asks for the child, as a model does (the
//      runner a detached parent keeps ready for its first child is then up). Also: the tool call
//      → the parent's next request (the parent's part: the child's setup, until `rye_execute`
//      returned).
// Spawns run one at a time, each child to its end before the next. One warm-up spawn first.
// Run after `pnpm build`: node bench/threads-orchestration.mjs   (BENCH_RUNS=n, default 10)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRye } from '../packages/ryeos/dist/index.js';
import { openThreadStore, threadsStateRoot, waitThreads } from '../packages/threads/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';
import { median, round } from './lib/common.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const HOLD_MS = 1000;
const THINK_MS = 500;

const DIRECTIVE = `# child

\`\`\`xml
<directive name="child" version="1.0.0">
  <metadata>
    <description>Orchestration benchmark child</description>
    <category>bench</category>
    <author>bench</author>
    <model tier="fast" provider="anthropic"/>
    <permissions><execute><tool>rye.file-system.read</tool></execute></permissions>
  </metadata>
  <outputs><output name="answer" required="true">Anything</output></outputs>
</directive>
\`\`\`

Return at once.
`;

const answer = { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] };

async function until(check, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the child');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const PARENT = `# parent

\`\`\`xml
<directive name="parent" version="1.0.0">
  <metadata>
    <description>Orchestration benchmark parent</description>
    <category>bench</category>
    <author>bench</author>
    <model tier="fast" provider="anthropic"/>
    <permissions><execute><directive>bench.kid</directive><tool>rye.file-system.read</tool></execute></permissions>
  </metadata>
  <outputs><output name="answer" required="true">Anything</output></outputs>
</directive>
\`\`\`

Start the kid, then return.
`;

/** The parent's child: talks OpenAI to a server of its own, so each side's script is its own. */
const KID = DIRECTIVE.replaceAll('child', 'kid').replace('provider="anthropic"', 'provider="openai"');

const spawnKid = {
  tool_calls: [
    { name: 'rye_execute', input: { item_id: 'directive:bench/kid', thread: 'fork', async: true } },
  ],
};

async function transcriptEvent(project, id, type) {
  const text = await readFile(join(threadsStateRoot(project), id, 'transcript.jsonl'), 'utf8');
  const event = text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .find((e) => e.event_type === type);
  return event ? event.timestamp * 1000 : Number.NaN;
}

async function registryRow(project, id) {
  const store = openThreadStore(threadsStateRoot(project));
  try {
    return await store.registry.getThread(id);
  } finally {
    await store.close();
  }
}

/** Every child spawned: each writes its signed record and transcripts after its final status. */
const pids = [];

async function spawnChild(rye) {
  const called = Date.now();
  const reply = await rye.execute({ item_id: 'directive:bench/child', thread: 'fork', async: true });
  const returned = Date.now();
  if (reply.status !== 'success' || !reply.async) throw new Error(`spawn failed: ${JSON.stringify(reply)}`);
  pids.push(Number(reply.pid));
  return { id: String(reply.thread_id), pid: Number(reply.pid), called, returned };
}

/**
 * (a): spawn, time the first request, let the child finish. `spare`: the facade keeps the next
 * fork's runner started (a long-lived host's default); without, each runner starts at the call.
 */
async function spawnLatency(project, env, spare) {
  const server = await startReplayServer({ turns: Array.from({ length: RUNS + 1 }, () => answer) });
  const rye = createRye({
    projectPath: project,
    env: { ...env, ANTHROPIC_BASE_URL: server.url },
    spareRunner: spare,
  });
  const runs = [];
  try {
    for (let i = 0; i <= RUNS; i++) {
      const { id, called, returned } = await spawnChild(rye);
      await until(() => server.requests.length > i);
      const first = server.requests[i].receivedAt;
      const waited = await waitThreads(project, [id], { timeoutSeconds: 30 });
      if (waited.results[id]?.status !== 'completed') throw new Error(JSON.stringify(waited.results[id]));
      if (i > 0)
        runs.push({ toRunning: first - called, toReturn: returned - called, childStart: first - returned });
    }
  } finally {
    await server.close();
  }
  return runs;
}

/** (b): spawn a child whose answer ends HOLD_MS after it starts; wait for it meanwhile. */
async function waitLatency(project, env) {
  const held = { ...answer, hold_before_final_ms: HOLD_MS };
  const server = await startReplayServer({ turns: Array.from({ length: RUNS + 1 }, () => held) });
  const rye = createRye({ projectPath: project, env: { ...env, ANTHROPIC_BASE_URL: server.url } });
  const runs = [];
  try {
    for (let i = 0; i <= RUNS; i++) {
      const { id, pid } = await spawnChild(rye);
      await until(() => server.requests.length > i);
      let resolved = 0;
      const waited = await waitThreads(project, [id], { timeoutSeconds: 30 }).then((result) => {
        resolved = Date.now();
        return result;
      });
      if (waited.results[id]?.status !== 'completed') throw new Error(JSON.stringify(waited.results[id]));
      // Its transcript's last lines may come after the wait resolved: read them once it has exited.
      await until(() => !alive(pid));
      const row = await registryRow(project, id);
      const statusAt = Date.parse(row.completed_at);
      const finalSent = server.requests[i].finalSentAt;
      const completedEvent = await transcriptEvent(project, id, 'thread_completed');
      if (i > 0) {
        runs.push({
          afterStatus: resolved - statusAt,
          afterEvent: resolved - completedEvent,
          afterFinalSse: resolved - finalSent,
          finalize: statusAt - finalSent,
        });
      }
    }
  } finally {
    await server.close();
  }
  return runs;
}

/**
 * (c): one parent per child; the parent's first answer asks for the child, its second returns.
 * `detachedParent`: the parent runs in a runner process of its own, which sets the child up.
 * `thinkMs`: how long the parent's model takes before the answer that asks for the child.
 */
async function childLatency(project, env, detachedParent, thinkMs = 0) {
  const asks = { ...spawnKid, delay_ms: thinkMs };
  const parents = await startReplayServer({
    turns: Array.from({ length: RUNS + 1 }, () => [asks, answer]).flat(),
  });
  const kids = await startReplayServer({ turns: Array.from({ length: RUNS + 1 }, () => answer) });
  const rye = createRye({
    projectPath: project,
    env: {
      ...env,
      ANTHROPIC_BASE_URL: parents.url,
      OPENAI_BASE_URL: `${kids.url}/v1`,
      OPENAI_API_KEY: 'bench',
    },
  });
  const store = openThreadStore(threadsStateRoot(project));
  const runs = [];
  try {
    for (let i = 0; i <= RUNS; i++) {
      const reply = await rye.execute({
        item_id: 'directive:bench/parent',
        thread: 'fork',
        ...(detachedParent ? { async: true } : {}),
      });
      if (reply.status !== 'success') throw new Error(`parent failed: ${JSON.stringify(reply)}`);
      if (reply.pid) pids.push(Number(reply.pid));
      const parentId = String(reply.thread_id);
      await until(() => kids.requests.length > i && parents.requests.length > 2 * i + 1);
      const [kid] = await store.registry.listChildren(parentId);
      if (!kid) throw new Error('the parent started no child');
      if (kid.pid) pids.push(Number(kid.pid));
      const waited = await waitThreads(project, [parentId, kid.thread_id], { timeoutSeconds: 30 });
      for (const id of [parentId, kid.thread_id]) {
        if (waited.results[id]?.status !== 'completed') throw new Error(JSON.stringify(waited.results[id]));
      }
      const toolCall = parents.requests[2 * i].finalSentAt;
      if (i > 0) {
        runs.push({
          toRunning: kids.requests[i].receivedAt - toolCall,
          toReturn: parents.requests[2 * i + 1].receivedAt - toolCall,
        });
      }
    }
  } finally {
    await store.close();
    await parents.close();
    await kids.close();
  }
  return runs;
}

export async function run({ quiet = false } = {}) {
  const say = (line) => quiet || console.log(line);
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-orch-'));
  try {
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(join(project, '.ai', 'directives', 'bench'), { recursive: true });
    await mkdir(user, { recursive: true });
    await writeFile(join(project, '.ai', 'directives', 'bench', 'child.md'), DIRECTIVE);
    await writeFile(join(project, '.ai', 'directives', 'bench', 'parent.md'), PARENT);
    await writeFile(join(project, '.ai', 'directives', 'bench', 'kid.md'), KID);
    const env = { USER_SPACE: user, PATH: process.env.PATH ?? '', ANTHROPIC_API_KEY: 'bench' };
    const rye = createRye({ projectPath: project, env });
    await rye.generateKeys();
    for (const id of ['directive:bench/child', 'directive:bench/parent', 'directive:bench/kid']) {
      const signed = await rye.sign(id);
      if (signed.status === 'error') throw new Error(JSON.stringify(signed));
    }

    const spawns = await spawnLatency(project, env, true);
    const coldSpawns = await spawnLatency(project, env, false);
    const waits = await waitLatency(project, env);
    const kids = await childLatency(project, env, false);
    const detachedKids = await childLatency(project, env, true);
    const thoughtKids = await childLatency(project, env, true, THINK_MS);
    const m = (runs, key, digits = 0) => round(median(runs.map((r) => r[key])), digits);
    const max = (runs, key, digits = 0) => round(Math.max(...runs.map((r) => r[key])), digits);
    const result = {
      bench: 'threads-orchestration',
      runs: RUNS,
      spawn_to_running_median_ms: m(spawns, 'toRunning'),
      spawn_to_running_max_ms: max(spawns, 'toRunning'),
      spawn_call_returned_median_ms: m(spawns, 'toReturn'),
      spawn_child_start_median_ms: m(spawns, 'childStart'),
      spawn_to_running_no_spare_median_ms: m(coldSpawns, 'toRunning'),
      spawn_to_running_no_spare_max_ms: max(coldSpawns, 'toRunning'),
      spawn_no_spare_call_returned_median_ms: m(coldSpawns, 'toReturn'),
      wait_after_status_median_ms: m(waits, 'afterStatus'),
      wait_after_status_max_ms: max(waits, 'afterStatus'),
      wait_after_completed_event_median_ms: m(waits, 'afterEvent'),
      wait_after_final_sse_median_ms: m(waits, 'afterFinalSse'),
      child_finalize_to_status_median_ms: m(waits, 'finalize'),
      child_to_running_median_ms: m(kids, 'toRunning'),
      child_to_running_max_ms: max(kids, 'toRunning'),
      child_call_returned_median_ms: m(kids, 'toReturn'),
      child_of_detached_parent_to_running_median_ms: m(detachedKids, 'toRunning'),
      child_of_detached_parent_to_running_max_ms: max(detachedKids, 'toRunning'),
      child_of_detached_parent_call_returned_median_ms: m(detachedKids, 'toReturn'),
      child_of_detached_parent_thinking_to_running_median_ms: m(thoughtKids, 'toRunning'),
      child_of_detached_parent_thinking_to_running_max_ms: max(thoughtKids, 'toRunning'),
    };
    say(`${RUNS} detached children measured per part (after 1 warm-up), one at a time`);
    say(
      `(a) execute(async) called → the child's first model request: median ${result.spawn_to_running_median_ms} ms, max ${result.spawn_to_running_max_ms} ms (goal < 300 ms)`,
    );
    say(
      `    of which the execute call, until it returned: median ${result.spawn_call_returned_median_ms} ms; returned → first request (the rest of the runner's start): median ${result.spawn_child_start_median_ms} ms`,
    );
    say(
      `    without a spare runner (each started at the call, as the CLI does): median ${result.spawn_to_running_no_spare_median_ms} ms, max ${result.spawn_to_running_no_spare_max_ms} ms (the call returned after ${result.spawn_no_spare_call_returned_median_ms} ms)`,
    );
    say(
      `(b) child's final status written (registry completed_at) → waitThreads resolved: median ${result.wait_after_status_median_ms} ms, max ${result.wait_after_status_max_ms} ms (goal < 100 ms)`,
    );
    say(
      `    for scale: from its thread_completed transcript event ${result.wait_after_completed_event_median_ms} ms; from the final SSE event sent ${result.wait_after_final_sse_median_ms} ms (finalize until the status: ${result.child_finalize_to_status_median_ms} ms)`,
    );
    say(
      `(c) a parent thread's rye_execute(directive, async) → the child's first model request: median ${result.child_to_running_median_ms} ms, max ${result.child_to_running_max_ms} ms (goal < 300 ms); the parent had its result after ${result.child_call_returned_median_ms} ms`,
    );
    say(
      `    the parent detached (its runner sets the child up, the first of its process): median ${result.child_of_detached_parent_to_running_median_ms} ms, max ${result.child_of_detached_parent_to_running_max_ms} ms; the parent had its result after ${result.child_of_detached_parent_call_returned_median_ms} ms`,
    );
    say(
      `    the parent detached, its model taking ${THINK_MS} ms to ask: median ${result.child_of_detached_parent_thinking_to_running_median_ms} ms, max ${result.child_of_detached_parent_thinking_to_running_max_ms} ms`,
    );
    return result;
  } finally {
    await until(() => !pids.some(alive)).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
