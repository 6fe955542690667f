// Managed-thread runner overhead (issue 13: per turn, excluding provider time, median < 5 ms).
// Threads of TURNS turns run through the facade against the replay server on 127.0.0.1; each
// turn calls the signed rye/file-system/read tool, the last one returns outputs. The runner
// measures where the time went (provider, tools, itself) and reports it in `metadata.timing`; setup and
// finalize (registry, ledger, thread.json, capabilities.md, transcript, knowledge markdown) are
// reported apart, per thread. Growth shows in the runner's own ms of the first five turns
// against the last five (`metadata.timing.runner_ms_by_turn`): a cost that grows with the
// thread (re-reading its transcript, re-rendering its knowledge item) makes the late ones dearer.
// Work that runs beside the turn (a background render) shows in the whole turn's time instead:
// request to next request at the replay server, early against late.
// Run after `pnpm build`: node bench/threads-runner.mjs   (BENCH_TURNS=n, default 50; BENCH_THREADS=n)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRye } from '../packages/ryeos/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';
import { median, round } from './lib/common.mjs';

const TURNS = Number(process.env.BENCH_TURNS ?? 50);
const EDGE = 5;
const THREADS = Number(process.env.BENCH_THREADS ?? 7);

const DIRECTIVE = `# bench

\`\`\`xml
<directive name="bench" version="1.0.0">
  <metadata>
    <description>Runner benchmark</description>
    <category>bench</category>
    <author>bench</author>
    <limits turns="${TURNS + 5}"/>
    <permissions><execute><tool>rye.file-system.read</tool></execute></permissions>
  </metadata>
  <outputs><output name="answer" required="true">Anything</output></outputs>
</directive>
\`\`\`

Read notes.txt ${TURNS - 1} times, then return.
`;

const root = await mkdtemp(join(tmpdir(), 'rye-bench-threads-'));
try {
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'directives', 'bench'), { recursive: true });
  await mkdir(user, { recursive: true });
  await writeFile(join(project, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  await writeFile(join(project, '.ai', 'directives', 'bench', 'bench.md'), DIRECTIVE);
  const env = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
  await createRye({ projectPath: project, env }).generateKeys();
  await createRye({ projectPath: project, env }).sign('directive:bench/bench');

  const turns = [];
  for (let i = 0; i < TURNS - 1; i++) {
    turns.push({
      tool_calls: [{ name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
      usage: { input_tokens: 500, output_tokens: 20 },
    });
  }
  turns.push({ tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] });

  const perTurn = [];
  const fixed = [];
  const tools = [];
  const provider = [];
  const early = [];
  const late = [];
  const earlyTurn = [];
  const lateTurn = [];
  for (let t = 0; t < THREADS; t++) {
    const server = await startReplayServer({ turns });
    const rye = createRye({
      projectPath: project,
      env: { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench' },
    });
    const started = performance.now();
    const result = await rye.execute({ item_id: 'directive:bench/bench', thread: 'fork' });
    const wall = performance.now() - started;
    // A whole turn as the model sees it: from one request to the next (ms, the server's clock).
    const gaps = server.requests.slice(1).map((r, i) => r.receivedAt - server.requests[i].receivedAt);
    await server.close();
    if (result.status !== 'success') throw new Error(`thread failed: ${JSON.stringify(result)}`);
    const { runner_ms, provider_ms, tools_ms, runner_ms_by_turn: byTurn } = result.metadata.timing;
    if (t === 0) continue; // the first thread loads modules and warms the tool worker
    perTurn.push(...byTurn);
    early.push(...byTurn.slice(0, EDGE));
    late.push(...byTurn.slice(-EDGE));
    earlyTurn.push(...gaps.slice(0, EDGE));
    lateTurn.push(...gaps.slice(-EDGE));
    provider.push(provider_ms / result.cost.turns);
    tools.push(tools_ms / result.cost.turns);
    fixed.push(wall - runner_ms - provider_ms - tools_ms);
  }
  console.log(`threads: ${THREADS - 1} measured (after 1 warm-up), ${TURNS} turns each`);
  console.log(
    `runner overhead per turn, excluding provider and tool time: median ${round(median(perTurn), 3)} ms (goal < 5 ms)`,
  );
  console.log(
    `  turns 1–${EDGE}: median ${round(median(early), 3)} ms; turns ${TURNS - EDGE + 1}–${TURNS}: median ${round(median(late), 3)} ms (goal: no growth)`,
  );
  console.log(
    `whole turn, request to next request (model, tool, runner, and what runs beside them): turns 1–${EDGE} median ${median(earlyTurn)} ms; last ${EDGE} median ${median(lateTurn)} ms`,
  );
  console.log(
    `  for scale, per turn: provider (replay on 127.0.0.1) ${round(median(provider), 2)} ms, tool ${round(median(tools), 2)} ms`,
  );
  console.log(
    `setup + finalize per thread (registry, ledger, signed files, knowledge transcript): median ${round(median(fixed), 1)} ms`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
