// Executor overhead for a trivial JS tool (issue 3):
//  - warm, in-process: Executor.executeTool vs spawning the same script directly with node
//  - cold CLI: `rye execute tool:bench/noop` wall time vs `node noop.js`
//  - cold CLI, function-style (issue 12): `rye execute tool:bench/fn` (node/function runtime) vs
//    `node fn-script.mjs`, the same execute() called by a plain script
// Run after `pnpm build`: node bench/execute.mjs   (BENCH_RUNS=n, default 40)
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  Executor,
  generateSigningKey,
  signItems,
  signingKeyDir,
  trustKey,
} from '../packages/executor/dist/index.js';
import { median, NOOP_TOOL, RYE_BIN, round, SYSTEM_BUNDLES } from './lib/common.mjs';

const CLI = RYE_BIN;

function timeProcess(command, args, env, input = '{}') {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`${args.join(' ')} exited ${code}`)),
    );
    child.stdin.end(input);
  });
}

const FUNCTION_BODY = `export async function execute(params, context) {
  return { success: true, n: params.n ?? 0, project: context.projectPath };
}
`;

const FUNCTION_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'bench';
export const __tool_description__ = 'Echo n (function-style)';
${FUNCTION_BODY}`;

/** The same execute() as a plain node script: read params on stdin, print the result. */
const FUNCTION_SCRIPT = `${FUNCTION_BODY}
let input = '';
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(await execute(JSON.parse(input || '{}'), { projectPath: process.cwd() })));
`;

async function setUp(root) {
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  const toolPath = join(project, '.ai', 'tools', 'bench', 'noop.js');
  await writeFile(toolPath, NOOP_TOOL);
  await writeFile(join(project, '.ai', 'tools', 'bench', 'fn.js'), FUNCTION_TOOL);
  const scriptPath = join(root, 'fn-script.mjs');
  await writeFile(scriptPath, FUNCTION_SCRIPT);
  const env = { PATH: process.env.PATH, USER_SPACE: user };
  const options = {
    projectPath: project,
    userSpace: user,
    systemBundles: SYSTEM_BUNDLES,
    env,
  };
  const executor = await Executor.create(options);
  const key = await generateSigningKey(signingKeyDir(user, env));
  await trustKey(executor.spaces.user, key.publicKeyPem);
  for (const ref of ['tool:bench/noop', 'tool:bench/fn']) {
    const signed = await signItems(executor, ref, { keyPair: key });
    if (signed.failed.length) throw new Error(JSON.stringify(signed.failed));
  }
  return { project, toolPath, scriptPath, env, executor: await Executor.create(options) };
}

export async function run(options) {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-'));
  try {
    return await measure(await setUp(root), options);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function measure(
  { project, toolPath, scriptPath, env, executor },
  { runs = Number(process.env.BENCH_RUNS) || 40 } = {},
) {
  const direct = () => timeProcess(process.execPath, [toolPath, '--project-path', project], env);
  const viaExecutor = async () => {
    const start = performance.now();
    const result = await executor.executeTool('bench/noop', { n: 1 });
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    return performance.now() - start;
  };
  const cli = () =>
    timeProcess(
      process.execPath,
      [CLI, 'execute', 'tool:bench/noop', '--project', project, '--params', '{"n":1}'],
      env,
      '',
    );
  const script = () => timeProcess(process.execPath, [scriptPath], env);
  const cliFunction = () =>
    timeProcess(
      process.execPath,
      [CLI, 'execute', 'tool:bench/fn', '--project', project, '--params', '{"n":1}'],
      env,
      '',
    );
  for (let i = 0; i < 3; i++) for (const f of [direct, viaExecutor, cli, script, cliFunction]) await f();
  const samples = { direct: [], executor: [], cli: [], script: [], cliFunction: [] };
  for (let i = 0; i < runs; i++) {
    samples.direct.push(await direct());
    samples.executor.push(await viaExecutor());
    samples.cli.push(await cli());
    samples.script.push(await script());
    samples.cliFunction.push(await cliFunction());
  }
  const [d, e, c] = [median(samples.direct), median(samples.executor), median(samples.cli)];
  const [s, f] = [median(samples.script), median(samples.cliFunction)];
  return [
    {
      bench: 'execute_overhead_warm',
      runs,
      median_ms_executor: round(e),
      median_ms_direct: round(d),
      ratio: round(e / d, 3),
      goal: 1.1,
    },
    {
      bench: 'cli_cold',
      runs,
      median_ms_cli: round(c),
      median_ms_node_script: round(d),
      ratio: round(c / d, 3),
      goal: 1.5,
    },
    {
      bench: 'cli_cold_function',
      runs,
      median_ms_cli: round(f),
      median_ms_node_script: round(s),
      ratio: round(f / s, 3),
      goal: 2,
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await run()) console.log(JSON.stringify(line));
}
