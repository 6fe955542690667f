// Streaming inline tool execution (issue 14). A managed thread runs through the facade against the
// replay server on 127.0.0.1; its first turn streams for ~3 s and makes 5 calls of a real signed
// node/function tool that takes 200 ms, each call written after a stretch of text (as models
// interleave them). Printed:
//  - time from each call's completion in the stream to its start, median over every call of
//    every inline run (goal < 10 ms): as the runner sees it (the call's part arrives → the
//    runner starts it), and end to end (the transcript's tool_call_start, written when the part
//    arrives → the tool's execute() begins in its warm worker, both epoch clocks)
//  - the turn's wall time (request received → the next request, i.e. every tool done), inline vs
//    batch (the same provider with config.stream.mode: batch, signed in the project), and the
//    ratio batch / inline (goal ≥ 1.2)
// Run after `pnpm build`: node bench/streaming.mjs   (BENCH_RUNS=n per mode, default 3)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRye } from '../packages/ryeos/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';
import { median, round } from './lib/common.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TOOL_MS = 200;
const CALLS = 5;
const CHUNK_DELAY_MS = 20;
// 12 characters per text delta; ~24 deltas of text before each call: ~0.6 s of stream per call.
const TEXT_BEFORE = 'Looking at the next part of the task before I call the tool. '.repeat(5).slice(0, 288);

const SLOW_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'bench';
export const __tool_description__ = 'Waits a while, like a real tool doing work';
export const CONFIG_SCHEMA = { type: 'object', properties: { n: { type: 'integer' } } };
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export async function execute(params, context) {
  const at = performance.timeOrigin + performance.now();
  appendFileSync(join(context.project_path, 'starts.log'), JSON.stringify({ n: params.n, at }) + '\\n');
  await new Promise((resolve) => setTimeout(resolve, ${TOOL_MS}));
  return { success: true, n: params.n ?? 0 };
}
`;

const DIRECTIVE = `# stream

\`\`\`xml
<directive name="stream" version="1.0.0">
  <metadata>
    <description>Streaming benchmark</description>
    <category>bench</category>
    <author>bench</author>
    <permissions><execute><tool>bench.slow</tool></execute></permissions>
  </metadata>
  <outputs><output name="answer" required="true">Anything</output></outputs>
</directive>
\`\`\`

Call the slow tool five times, then return.
`;

const here = dirname(fileURLToPath(import.meta.url));
const shippedProvider = join(
  here,
  '..',
  'packages',
  'threads',
  '.ai',
  'tools',
  'rye',
  'agent',
  'providers',
  'anthropic.yaml',
);

const script = {
  turns: [
    {
      tool_calls: Array.from({ length: CALLS }, (_, i) => ({
        name: 'bench_slow',
        input: { n: i },
        text_before: TEXT_BEFORE,
      })),
      chunk_delay_ms: CHUNK_DELAY_MS,
      usage: { input_tokens: 500, output_tokens: 400 },
    },
    { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
  ],
};

async function oneRun(project, env) {
  const server = await startReplayServer(script);
  try {
    const rye = createRye({
      projectPath: project,
      env: { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench' },
    });
    const result = await rye.execute({ item_id: 'directive:bench/stream', thread: 'fork' });
    if (result.status !== 'success') throw new Error(`thread failed: ${JSON.stringify(result)}`);
    const [first, second] = server.requests;
    const threadDir = join(project, '.ai', 'state', 'threads', result.thread_id);
    const starts = (await readFile(join(threadDir, 'transcript.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((e) => e.event_type === 'tool_call_start' && e.payload.tool === 'bench_slow')
      .map((e) => e.timestamp * 1000);
    const toolStarts = (await readFile(join(project, 'starts.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).at);
    await rm(join(project, 'starts.log'));
    return {
      endToEnd: starts.map((at, i) => toolStarts[i] - at),
      turnMs: second.receivedAt - first.receivedAt,
      streamMs: first.finalSentAt - first.receivedAt,
      startDelays: result.metadata.timing.tool_start_delays_ms,
    };
  } finally {
    await server.close();
  }
}

export async function run({ quiet = false } = {}) {
  const say = (line) => quiet || console.log(line);
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-stream-'));
  try {
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(join(project, '.ai', 'directives', 'bench'), { recursive: true });
    await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
    await mkdir(user, { recursive: true });
    await writeFile(join(project, '.ai', 'directives', 'bench', 'stream.md'), DIRECTIVE);
    await writeFile(join(project, '.ai', 'tools', 'bench', 'slow.js'), SLOW_TOOL);
    const env = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
    const rye = createRye({ projectPath: project, env });
    await rye.generateKeys();
    for (const ref of ['directive:bench/stream', 'tool:bench/slow']) {
      const signed = await rye.sign(ref);
      if (signed.status === 'error') throw new Error(JSON.stringify(signed));
    }

    await oneRun(project, env); // warm-up: modules, the tool's worker
    const inline = [];
    for (let i = 0; i < RUNS; i++) inline.push(await oneRun(project, env));

    // The same provider, tools after the stream: a project copy, signed by this user.
    const providerDir = join(project, '.ai', 'tools', 'rye', 'agent', 'providers');
    await mkdir(providerDir, { recursive: true });
    const shipped = (await readFile(shippedProvider, 'utf8')).replace(/^# rye:signed:.*\n/, '');
    await writeFile(join(providerDir, 'anthropic.yaml'), shipped.replace('mode: inline', 'mode: batch'));
    const signed = await createRye({ projectPath: project, env }).sign('tool:rye/agent/providers/anthropic');
    if (signed.status === 'error') throw new Error(JSON.stringify(signed));
    const batch = [];
    for (let i = 0; i < RUNS; i++) batch.push(await oneRun(project, env));

    const delays = inline.flatMap((r) => r.startDelays);
    const endToEnd = inline.flatMap((r) => r.endToEnd);
    const result = {
      bench: 'streaming',
      runs_per_mode: RUNS,
      calls_per_turn: CALLS,
      tool_ms: TOOL_MS,
      stream_ms: round(median(inline.map((r) => r.streamMs)), 0),
      tool_start_delay_median_ms: round(median(delays), 3),
      tool_start_delay_max_ms: round(Math.max(...delays), 3),
      tool_start_end_to_end_median_ms: round(median(endToEnd), 2),
      tool_start_end_to_end_max_ms: round(Math.max(...endToEnd), 2),
      turn_inline_ms: round(median(inline.map((r) => r.turnMs)), 0),
      turn_batch_ms: round(median(batch.map((r) => r.turnMs)), 0),
    };
    result.batch_over_inline = round(result.turn_batch_ms / result.turn_inline_ms, 3);
    say(`stream of the first turn: ${result.stream_ms} ms, ${CALLS} calls of a ${TOOL_MS} ms tool`);
    say(
      `call complete in the stream → call started: median ${result.tool_start_delay_median_ms} ms, max ${result.tool_start_delay_max_ms} ms (goal < 10 ms)`,
    );
    say(
      `call complete in the stream → the tool's execute() begins (warm worker): median ${result.tool_start_end_to_end_median_ms} ms, max ${result.tool_start_end_to_end_max_ms} ms`,
    );
    say(
      `turn wall time: inline ${result.turn_inline_ms} ms, batch ${result.turn_batch_ms} ms: batch/inline ${result.batch_over_inline}× (goal ≥ 1.2×)`,
    );
    return result;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
