// ryeos against the Vercel AI SDK (issue 30, point 5): the same scripted model (the replay server
// of packages/threads/src/testing on 127.0.0.1, Anthropic wire) and the same tool, in-library.
//   (a) a 60-turn thread: 59 turns that each call the tool once with ms=0, then a text answer;
//       ryeos forks a directive (`createRye().execute`), the AI SDK runs `streamText` with
//       `stopWhen: stepCountIs(60)`. Median wall ms per thread, and the ratio (goal ≤ 1.0×).
//   (b) one turn of five calls to one parallel-safe tool that waits BENCH_CALL_MS (1 s), then a
//       text answer. Median wall ms and ratio (goal ≤ 1.0×).
//   (c) first library call → the first model request reaching the server, in a fresh process
//       (modules imported and the client made, nothing else warmed). Median of BENCH_FIRST samples.
// (a) and (b) are a long-lived host's figures: one client per process, one warm-up run first.
// The tool does the same work in both (wait `ms`, answer `{success:true}`); what differs is where
// it runs: ryeos verifies its signed item and runs it in a warm worker process (the palette's
// workers start with the thread), the AI SDK calls a function in its own process. ryeos also
// keeps what its guarantees need and the AI SDK does not: a signed transcript with a checkpoint
// per turn, the registry and ledger (SQLite), capabilities, hooks and limits.
// The AI SDK (`ai` 5, `@ai-sdk/anthropic` 2) is installed from the registry into a temp folder
// at bench time, never into the repository, and removed afterwards.
// Run after `pnpm build`: node bench/threads-vs-ai-sdk.mjs
//   (BENCH_RUNS=n threads per figure, default 5; BENCH_FIRST=n cold samples, default 5;
//    BENCH_CALL_MS=n, default 1000; BENCH_ONLY=ab runs only those figures; BENCH_CPU_PROF=dir writes a --cpu-prof of every child)
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createRye } from '../packages/ryeos/dist/index.js';
import { median, round } from './lib/common.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const FIRST = Number(process.env.BENCH_FIRST ?? 5);
const CALL_MS = Number(process.env.BENCH_CALL_MS ?? 1000);
const TURNS = 60;
const CALLS = 5;
const REPO = join(import.meta.dirname, '..');
const distUrl = (path) => pathToFileURL(join(REPO, 'packages', path)).href;

const TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'bench';
export const __tool_description__ = 'Wait ms milliseconds, then answer';
export const __parallel_safe__ = true;
export const CONFIG_SCHEMA = { type: 'object', properties: { ms: { type: 'integer' } } };
export async function execute(params) {
  await new Promise((resolve) => setTimeout(resolve, params.ms ?? 0));
  return { success: true };
}
`;

const DIRECTIVE = `# versus

\`\`\`xml
<directive name="versus" version="1.0.0">
  <metadata>
    <description>ryeos against the AI SDK</description>
    <category>bench</category>
    <author>bench</author>
    <limits turns="${TURNS + 5}"/>
    <permissions><execute><tool>bench.wait</tool></execute></permissions>
  </metadata>
</directive>
\`\`\`

Call the tool as the script says, then answer.
`;

/** The scripted model of each figure: the same turns for both libraries. */
const SCRIPTS = {
  turns: {
    turns: [
      ...Array.from({ length: TURNS - 1 }, () => ({
        tool_calls: [{ name: 'bench_wait', input: { ms: 0 } }],
        usage: { input_tokens: 500, output_tokens: 20 },
      })),
      { text: 'done' },
    ],
  },
  parallel: {
    turns: [
      { tool_calls: Array.from({ length: CALLS }, () => ({ name: 'bench_wait', input: { ms: CALL_MS } })) },
      { text: 'done' },
    ],
  },
};
SCRIPTS.first = SCRIPTS.parallel;

// A child is a long-lived host: one replay server playing the script once per run, one client
// (made by \`client(url)\`, before the clock starts), the script run BENCH_N times after one
// warm-up (none when BENCH_COLD); it prints [{wall, first}] (ms; first = the call → its first
// request reaching the server).
const CHILD_PRELUDE = `
import { startReplayServer } from ${JSON.stringify(distUrl('threads/dist/testing.js'))};
const [script, runs, cold] = [JSON.parse(process.env.BENCH_SCRIPT), Number(process.env.BENCH_N), process.env.BENCH_COLD === '1'];
const total = runs + (cold ? 0 : 1);
const server = await startReplayServer({ turns: Array.from({ length: total }, () => script.turns).flat() });
const runOnce = client(server.url);
const samples = [];
for (let i = 0; i < total; i++) {
  const seen = server.requests.length;
  const called = Date.now();
  const startedAt = performance.now();
  await runOnce();
  const wall = performance.now() - startedAt;
  const first = server.requests[seen].receivedAt - called;
  if (cold || i > 0) samples.push({ wall, first });
}
await server.close();
console.log(JSON.stringify(samples));
// ryeos keeps its warm tool workers for the next call; the sample is done.
process.exit(0);
`;

const RYE_CHILD = `
import { createRye } from ${JSON.stringify(distUrl('ryeos/dist/index.js'))};
function client(url) {
  const rye = createRye({ projectPath: process.env.BENCH_PROJECT, env: { ...process.env, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'bench' } });
  return async () => {
    const result = await rye.execute({ item_id: 'directive:bench/versus', thread: 'fork' });
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
  };
}
${CHILD_PRELUDE}`;

const AI_CHILD = `
import { streamText, stepCountIs, tool, jsonSchema } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
// The scripted model id is not one the SDK knows: no warning per step (it would cost it time).
globalThis.AI_SDK_LOG_WARNINGS = false;
const wait = tool({
  description: 'Wait ms milliseconds, then answer',
  inputSchema: jsonSchema({ type: 'object', properties: { ms: { type: 'integer' } } }),
  execute: async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms ?? 0));
    return { success: true };
  },
});
function client(url) {
  const anthropic = createAnthropic({ baseURL: url + '/v1', apiKey: 'bench' });
  return async () => {
  const result = streamText({
    model: anthropic('claude-3-5-haiku-latest'),
    system: 'Call the tool as the script says, then answer.',
    prompt: 'Run the directive.',
    tools: { bench_wait: wait },
    maxOutputTokens: 4096,
    stopWhen: stepCountIs(${TURNS}),
  });
  for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
  if ((await result.text) !== 'done') throw new Error('the AI SDK run did not reach the final answer');
  };
}
${CHILD_PRELUDE}`;

const PROFILE = process.env.BENCH_CPU_PROF;

function runChild(file, env) {
  return new Promise((resolve, reject) => {
    const flags = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [];
    const child = spawn(process.execPath, [...flags, file], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${file} exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)));
    });
  });
}

const root = await mkdtemp(join(tmpdir(), 'rye-bench-vs-ai-sdk-'));
try {
  const project = join(root, 'project');
  const user = join(root, 'user');
  const sdk = join(root, 'ai-sdk');
  await mkdir(join(project, '.ai', 'directives', 'bench'), { recursive: true });
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  await mkdir(user, { recursive: true });
  await mkdir(sdk, { recursive: true });
  const env = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
  const setup = createRye({ projectPath: project, env });
  await setup.generateKeys();
  await writeFile(join(project, '.ai', 'tools', 'bench', 'wait.js'), TOOL);
  await writeFile(join(project, '.ai', 'directives', 'bench', 'versus.md'), DIRECTIVE);
  await setup.sign('tool:bench/wait');
  await setup.sign('directive:bench/versus');

  await writeFile(join(sdk, 'package.json'), '{ "private": true, "type": "module" }\n');
  await promisify(execFile)(
    'npm',
    [
      'install',
      '--prefix',
      sdk,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      'ai@5',
      '@ai-sdk/anthropic@2',
    ],
    { env: process.env },
  );
  const ryeChild = join(root, 'rye-child.mjs');
  const aiChild = join(sdk, 'ai-child.mjs');
  await writeFile(ryeChild, RYE_CHILD);
  await writeFile(aiChild, AI_CHILD);

  const figure = async (name, runs, cold) => {
    const childEnv = (script) => ({
      ...env,
      BENCH_PROJECT: project,
      BENCH_SCRIPT: JSON.stringify(script),
      BENCH_N: String(runs),
      BENCH_COLD: cold ? '1' : '0',
    });
    const rye = [];
    const ai = [];
    // One sample per child process (after a warm-up in it unless cold), the two libraries taking
    // turns, so load from elsewhere on the machine falls on both alike.
    for (let i = 0; i < runs; i++) {
      const env = { ...childEnv(SCRIPTS[name]), BENCH_N: '1' };
      rye.push(...(await runChild(ryeChild, env)));
      ai.push(...(await runChild(aiChild, env)));
    }
    return { rye, ai };
  };
  const line = (label, rye, ai, goal) =>
    console.log(
      `${label}: ryeos ${round(rye, 1)} ms, AI SDK ${round(ai, 1)} ms, ratio ${round(rye / ai, 2)}× ${goal}`,
    );
  // Where a warm run's time goes before its first request (setup) against the rest.
  const setupLine = ({ rye, ai }) =>
    console.log(
      `    of which call → first request: ryeos ${round(median(rye.map((s) => s.first)), 1)} ms, AI SDK ${round(median(ai.map((s) => s.first)), 1)} ms`,
    );

  const only = process.env.BENCH_ONLY ?? 'abc';
  if (only.includes('a')) {
    const turns = await figure('turns', RUNS, false);
    line(
      `(a) ${TURNS}-turn thread, one 0 ms call per turn, median of ${RUNS}`,
      median(turns.rye.map((s) => s.wall)),
      median(turns.ai.map((s) => s.wall)),
      '(goal ≤ 1.0×)',
    );
    setupLine(turns);
  }
  if (only.includes('b')) {
    const parallel = await figure('parallel', RUNS, false);
    line(
      `(b) one turn of ${CALLS} × ${CALL_MS} ms calls to one parallel-safe tool, median of ${RUNS}`,
      median(parallel.rye.map((s) => s.wall)),
      median(parallel.ai.map((s) => s.wall)),
      '(goal ≤ 1.0×)',
    );
    setupLine(parallel);
  }
  if (only.includes('c')) {
    const first = await figure('first', FIRST, true);
    line(
      `(c) first library call → first model request, fresh process, median of ${FIRST}`,
      median(first.rye.map((s) => s.first)),
      median(first.ai.map((s) => s.first)),
      '',
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
