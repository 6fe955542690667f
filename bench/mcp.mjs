// MCP figures (issue 5): cold start of `ryeos-mcp` (spawn → initialize → tools/list, median of
// ≥ 20) and warm `execute` of a trivial tool over MCP vs the tool's own process time.
// Run after `pnpm build`: node bench/mcp.mjs
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, NOOP_TOOL, RYE_BIN, round, stdioClient } from './lib/common.mjs';

const repo = join(import.meta.dirname, '..');
const SERVER = join(repo, 'packages', 'ryeos', 'dist', 'mcp-server.js');
const CLI = RYE_BIN;

const connect = (env) => stdioClient(SERVER, env);

const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } };

export async function run(options) {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-mcp-'));
  try {
    return await measure(root, options);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function measure(root, { runs = Number(process.env.BENCH_RUNS) || 20 } = {}) {
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  const toolPath = join(project, '.ai', 'tools', 'bench', 'noop.js');
  await writeFile(toolPath, NOOP_TOOL);
  const env = { PATH: process.env.PATH, USER_SPACE: user };
  for (const args of [
    ['keys', 'generate'],
    ['sign', 'tool:bench/noop', '--project', project],
  ]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  }

  const cold = [];
  for (let i = 0; i < runs + 2; i++) {
    const start = performance.now();
    const client = connect(env);
    await client.request('initialize', INIT);
    client.notify('notifications/initialized');
    const list = await client.request('tools/list', {});
    if (list.result.tools.length !== 4) throw new Error('expected four tools');
    const elapsed = performance.now() - start;
    await client.close();
    if (i >= 2) cold.push(elapsed);
  }

  const client = connect(env);
  await client.request('initialize', INIT);
  client.notify('notifications/initialized');
  const call = {
    name: 'execute',
    arguments: { project_path: project, item_id: 'tool:bench/noop', parameters: { n: 1 } },
  };
  const direct = () =>
    new Promise((resolve) => {
      const start = performance.now();
      const child = spawn(process.execPath, [toolPath, '--project-path', project], {
        env,
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      child.on('close', () => resolve(performance.now() - start));
      child.stdin.end('{"n":1}');
    });
  for (let i = 0; i < 5; i++) await client.request('tools/call', call);
  const viaMcp = [];
  const own = [];
  for (let i = 0; i < runs * 5; i++) {
    const start = performance.now();
    const reply = await client.request('tools/call', call);
    if (reply.result.isError) throw new Error(reply.result.content[0].text);
    viaMcp.push(performance.now() - start);
    own.push(await direct());
  }
  await client.close();
  return [
    { bench: 'mcp_cold_start', runs, median_ms: round(median(cold)), goal_ms: 300 },
    {
      bench: 'mcp_warm_execute',
      runs: runs * 5,
      median_ms: round(median(viaMcp)),
      tool_process_median_ms: round(median(own)),
      overhead_ms: round(median(viaMcp) - median(own)),
      goal_overhead_ms: 5,
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await run()) console.log(JSON.stringify(line));
}
