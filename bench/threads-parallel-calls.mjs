// One model response that makes five 1 s calls to one tool (issue 30 point 5), in ryeos: the
// tool marked `__parallel_safe__` (calls side by side) against the same tool without the mark
// (calls one after another, in stream order). The replay server on 127.0.0.1 streams the calls;
// the figure is the fork's wall time from `execute` to its result, median of BENCH_RUNS threads
// after one warm-up. The AI SDK `streamText` comparison on the same script: bench/threads-vs-ai-sdk.mjs.
// Run after `pnpm build`: node bench/threads-parallel-calls.mjs   (BENCH_RUNS=n, BENCH_CALL_MS=n)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRye } from '../packages/ryeos/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';
import { median, round } from './lib/common.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CALL_MS = Number(process.env.BENCH_CALL_MS ?? 1000);
const CALLS = 5;

const tool = (parallel) => `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'bench';
export const __tool_description__ = 'Wait, then answer';
${parallel ? 'export const __parallel_safe__ = true;\n' : ''}export const CONFIG_SCHEMA = { type: 'object', properties: { ms: { type: 'integer' } } };
export async function execute(params) {
  await new Promise((resolve) => setTimeout(resolve, params.ms ?? 0));
  return { success: true };
}
`;

const directive = (name) => `# ${name}

\`\`\`xml
<directive name="${name}" version="1.0.0">
  <metadata>
    <description>Parallel calls benchmark</description>
    <category>bench</category>
    <author>bench</author>
    <permissions><execute><tool>bench.${name}_tool</tool></execute></permissions>
  </metadata>
  <outputs><output name="answer" required="true">Anything</output></outputs>
</directive>
\`\`\`

Call the tool five times, then return.
`;

const root = await mkdtemp(join(tmpdir(), 'rye-bench-parallel-'));
try {
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'directives', 'bench'), { recursive: true });
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  await mkdir(user, { recursive: true });
  const env = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
  const setup = createRye({ projectPath: project, env });
  await setup.generateKeys();
  for (const [name, parallel] of [
    ['parallel', true],
    ['serial', false],
  ]) {
    await writeFile(join(project, '.ai', 'tools', 'bench', `${name}_tool.js`), tool(parallel));
    await writeFile(join(project, '.ai', 'directives', 'bench', `${name}.md`), directive(name));
    await setup.sign(`tool:bench/${name}_tool`);
    await setup.sign(`directive:bench/${name}`);
  }

  for (const name of ['parallel', 'serial']) {
    const turns = [
      {
        tool_calls: Array.from({ length: CALLS }, (_, i) => ({
          name: `bench_${name}_tool`,
          id: `toolu_${i}`,
          input: { ms: CALL_MS },
        })),
      },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
    ];
    const walls = [];
    for (let run = 0; run <= RUNS; run++) {
      const server = await startReplayServer({ turns });
      const rye = createRye({
        projectPath: project,
        env: { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench' },
      });
      const started = performance.now();
      const result = await rye.execute({ item_id: `directive:bench/${name}`, thread: 'fork' });
      const wall = performance.now() - started;
      await server.close();
      if (result.status !== 'success') throw new Error(`thread failed: ${JSON.stringify(result)}`);
      if (run > 0) walls.push(wall); // the first run loads modules
    }
    console.log(
      `${name === 'parallel' ? 'parallel-safe tool' : 'tool without the mark'}: one turn of ${CALLS} × ${CALL_MS} ms calls, fork call → result median ${round(median(walls), 0)} ms (${RUNS} runs)`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
