// Warm runtimes (issue 12), all over one `ryeos-mcp` stdio session:
//  - warm `execute` of rye/file-system/read on a ~465-byte project file, p50/p99 (goal p50 ≤ 3 ms),
//    against the official filesystem MCP server's read_file on the same file (installed from npm
//    into this bench's temp folder, never a repo dependency; goal ryeos/official ≤ 6×)
//  - warm `execute` of a trivial node/function JS tool (goal p50 ≤ 3 ms) and of a trivial
//    python/function tool (goal p50 ≤ 5 ms); for comparison the same python tool on
//    python/function_isolated (a forked child per call), back to back and 20 ms apart
//  - 3 bursts of 200 concurrent executes (JS tool and read, all sent at once): errors (must be 0),
//    p50/p99, wall time, and the server's RSS before, after each burst and ~2 s after the last
//  - each tool's first call (cold worker), once
// Calls are timed from request write to response line. Needs network for the official server
// (without it, that part is skipped and said so).
// Run after `pnpm build`: node bench/warm.mjs
//   (BENCH_RUNS=n calls per warm figure, default 200; BENCH_CONCURRENCY=n calls per burst, default
//   200; BENCH_BURSTS=n, default 3)
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { median, percentile, RYE_BIN, round, rssMb, stdioClient } from './lib/common.mjs';

const repo = join(import.meta.dirname, '..');
const SERVER = join(repo, 'packages', 'ryeos', 'dist', 'mcp-server.js');
const CLI = RYE_BIN;
// The newest release at the time of writing; checked to run on Node 20.
const OFFICIAL = '@modelcontextprotocol/server-filesystem@2026.8.31';

const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } };
const WARM_UP = 5;

const JS_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'bench';
export const __tool_description__ = 'Trivial';
export async function execute(params, context) { return { success: true, n: params.n ?? 0 }; }
`;

const PY_TOOL = `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "bench"
__tool_description__ = "Trivial"
def execute(params, project_path):
    return {"success": True, "n": params.get("n", 0)}
`;

// A small text file of exactly 465 bytes, like a short README.
const NOTES = (() => {
  const line = 'The quick brown fox jumps over the lazy dog; warm runtimes answer in a millisecond.\n';
  const text = line.repeat(Math.ceil(465 / line.length)).slice(0, 464);
  return `${text}\n`;
})();

export async function run(options = {}) {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-warm-'));
  const clients = [];
  try {
    return await measure(root, clients, options);
  } finally {
    for (const client of clients) {
      const timer = setTimeout(() => client.child.kill('SIGKILL'), 5000);
      await client.close();
      clearTimeout(timer);
    }
    await rm(root, { recursive: true, force: true });
  }
}

/** `npm install` of the official server into `dir`; its entry point, or an Error saying why not. */
function installOfficial(dir) {
  return new Promise((resolve) => {
    const args = ['install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error', OFFICIAL];
    const child = spawn('npm', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 180_000 });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', (error) => resolve(error));
    child.on('close', (code, signal) =>
      resolve(
        code === 0
          ? join(dir, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')
          : new Error(
              `npm install ${OFFICIAL} failed (${signal ?? code}): ${err.trim().split('\n').slice(-3).join(' | ')}`,
            ),
      ),
    );
  });
}

/** One tools/call, timed; throws on a JSON-RPC error or an isError result. */
async function timedCall(client, name, args) {
  const start = performance.now();
  const reply = await client.request('tools/call', { name, arguments: args });
  const ms = performance.now() - start;
  if (reply.error) throw new Error(`${name}: ${JSON.stringify(reply.error)}`);
  if (reply.result?.isError) throw new Error(`${name}: ${reply.result.content?.[0]?.text}`);
  return { ms, reply };
}

const stats = (values) => ({
  p50_ms: round(median(values)),
  p99_ms: round(percentile(values, 99)),
  n: values.length,
});
const mark = (ok) => (ok ? '✔' : '✘');

async function measure(
  root,
  clients,
  {
    runs = Number(process.env.BENCH_RUNS) || 200,
    concurrency = Number(process.env.BENCH_CONCURRENCY) || 200,
    bursts: burstCount = Number(process.env.BENCH_BURSTS) || 3,
    quiet = false,
  } = {},
) {
  const say = quiet ? () => {} : (line) => console.log(line);
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  await writeFile(join(project, '.ai', 'tools', 'bench', 'fn_js.js'), JS_TOOL);
  await writeFile(join(project, '.ai', 'tools', 'bench', 'fn_py.py'), PY_TOOL);
  await writeFile(
    join(project, '.ai', 'tools', 'bench', 'fn_pyiso.py'),
    PY_TOOL.replace('python/function"', 'python/function_isolated"'),
  );
  await writeFile(join(project, 'notes.txt'), NOTES);
  const installing = installOfficial(join(root, 'fs-server'));
  const env = { PATH: process.env.PATH, USER_SPACE: user };
  for (const args of [
    ['keys', 'generate'],
    ['sign', 'tool:bench/fn_js', '--project', project],
    ['sign', 'tool:bench/fn_py', '--project', project],
    ['sign', 'tool:bench/fn_pyiso', '--project', project],
  ]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  }
  const officialEntry = await installing;

  const rye = stdioClient(SERVER, env);
  clients.push(rye);
  await rye.request('initialize', INIT);
  rye.notify('notifications/initialized');
  const TOOLS = {
    read: { id: 'rye/file-system/read', parameters: { path: 'notes.txt' } },
    js: { id: 'bench/fn_js', parameters: { n: 1 } },
    py: { id: 'bench/fn_py', parameters: { n: 1 } },
    pyiso: { id: 'bench/fn_pyiso', parameters: { n: 1 } },
  };
  const execute = (key) =>
    timedCall(rye, 'execute', {
      project_path: project,
      item_id: `tool:${TOOLS[key].id}`,
      parameters: TOOLS[key].parameters,
    });
  // The project's own state (trust, search index) is loaded once, so first calls time the worker.
  await timedCall(rye, 'search', { project_path: project, scope: 'tool', query: 'read' });

  const result = { bench: 'warm_runtimes', runs, cold_first_call_ms: {} };
  for (const key of ['read', 'js', 'py', 'pyiso']) {
    const { ms, reply } = await execute(key);
    const text = reply.result.content.map((c) => c.text ?? '').join('');
    if (key === 'read' && !text.includes('quick brown fox'))
      throw new Error(`read returned: ${text.slice(0, 300)}`);
    if (key !== 'read' && !/"n":\s*1/.test(text))
      throw new Error(`${TOOLS[key].id} returned: ${text.slice(0, 300)}`);
    result.cold_first_call_ms[TOOLS[key].id] = round(ms);
    say(`first call (cold worker) ${TOOLS[key].id}: ${round(ms, 1)} ms`);
  }

  // The official server, rooted at the project; read_file, or whatever its tools/list names it.
  let official = null;
  if (officialEntry instanceof Error) {
    say(`official filesystem server: NOT MEASURED — ${officialEntry.message}`);
    result.official = { error: officialEntry.message };
  } else {
    official = stdioClient(officialEntry, env, [project]);
    clients.push(official);
    await official.request('initialize', INIT);
    official.notify('notifications/initialized');
    const names = (await official.request('tools/list', {})).result.tools.map((t) => t.name);
    const tool = ['read_file', 'read_text_file'].find((n) => names.includes(n));
    if (!tool) throw new Error(`official server has no read tool: ${names.join(', ')}`);
    const file = join(project, 'notes.txt');
    official.read = () => timedCall(official, tool, { path: file });
    const { ms, reply } = await official.read();
    if (reply.result.content[0].text !== NOTES) throw new Error('official read_file returned other text');
    result.official = { package: OFFICIAL, tool, cold_first_call_ms: round(ms) };
    say(`first call official ${tool}: ${round(ms, 1)} ms`);
  }

  // Warm: a few warm-up calls, then `runs` timed ones; ryeos and official reads interleaved so
  // both see the same machine load.
  for (let i = 0; i < WARM_UP; i++) {
    for (const key of ['read', 'js', 'py', 'pyiso']) await execute(key);
    await official?.read();
  }
  const times = { read: [], official: [], js: [], py: [], pyiso: [] };
  for (let i = 0; i < runs; i++) {
    times.read.push((await execute('read')).ms);
    if (official) times.official.push((await official.read()).ms);
  }
  for (let i = 0; i < runs; i++) times.js.push((await execute('js')).ms);
  for (let i = 0; i < runs; i++) times.py.push((await execute('py')).ms);
  for (let i = 0; i < runs; i++) times.pyiso.push((await execute('pyiso')).ms);
  // The isolated calls 20 ms apart, as a model's turns space a thread's calls: each runs in a
  // child forked ahead of it while the worker is idle, and back-to-back calls leave it no idle
  // time (on a machine where page faults are slow, the forks then set the pace).
  times.pyisoSpaced = [];
  for (let i = 0; i < Math.min(runs, 100); i++) {
    await sleep(20);
    times.pyisoSpaced.push((await execute('pyiso')).ms);
  }

  const line = (label, s, goal) =>
    `${label}: p50 ${round(s.p50_ms, 1)} ms, p99 ${round(s.p99_ms, 1)} ms` +
    (goal === undefined ? '' : ` (goal p50 ≤ ${goal} ms) ${mark(s.p50_ms <= goal)}`);
  result.read = { ...stats(times.read), goal_p50_ms: 3 };
  say(line('warm execute rye/file-system/read', result.read, 3));
  if (official) {
    Object.assign(result.official, stats(times.official));
    const ratio = round(result.read.p50_ms / result.official.p50_ms, 1);
    Object.assign(result.official, {
      ratio_p50: ratio,
      ratio_p99: round(result.read.p99_ms / result.official.p99_ms, 1),
      goal_ratio: 6,
    });
    say(line(`official filesystem server ${result.official.tool}`, result.official));
    say(
      `ratio ryeos/official (p50): ${ratio}× (p99 ${result.official.ratio_p99}×) (goal ≤ 6×) ${mark(ratio <= 6)}`,
    );
  }
  result.js = { ...stats(times.js), goal_p50_ms: 3 };
  say(line('warm execute bench/fn_js (node/function)', result.js, 3));
  result.py = { ...stats(times.py), goal_p50_ms: 5 };
  say(line('warm execute bench/fn_py (python/function)', result.py, 5));
  result.py_isolated = stats(times.pyiso);
  say(line('warm execute bench/fn_pyiso (python/function_isolated)', result.py_isolated));
  result.py_isolated_spaced_20ms = stats(times.pyisoSpaced);
  say(line('warm execute bench/fn_pyiso, calls 20 ms apart', result.py_isolated_spaced_20ms));

  // Concurrency: `concurrency` calls (half the JS tool, half read) written at once, burstCount times.
  const rss = { before_mb: rssMb(rye.pid), after_burst_mb: [] };
  const bursts = [];
  for (let b = 0; b < burstCount; b++) {
    const start = performance.now();
    const settled = await Promise.allSettled(
      Array.from({ length: concurrency }, (_, i) => execute(i % 2 ? 'read' : 'js')),
    );
    const wall = performance.now() - start;
    const ok = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value.ms);
    const failed = settled.filter((s) => s.status === 'rejected');
    rss.after_burst_mb.push(rssMb(rye.pid));
    bursts.push({
      calls: concurrency,
      errors: failed.length,
      first_error: failed[0]?.reason?.message?.slice(0, 300),
      ...(ok.length
        ? { min_ms: round(Math.min(...ok)), p50_ms: round(median(ok)), p99_ms: round(percentile(ok, 99)) }
        : {}),
      wall_ms: round(wall),
    });
  }
  await sleep(2000);
  rss.after_idle_2s_mb = rssMb(rye.pid);
  const errors = bursts.reduce((n, b) => n + b.errors, 0);
  const growth = rss.after_burst_mb[burstCount - 1] - rss.after_burst_mb[0];
  // Flat: the last burst leaves the server no more than 10 MB above the first one did.
  rss.flat = growth <= 10;
  result.concurrent = { calls_per_burst: concurrency, bursts, errors, rss };
  say(
    `concurrent ${concurrency} executes × ${burstCount} bursts (fn_js + read): errors ${errors} (must be 0) ${mark(errors === 0)}`,
  );
  bursts.forEach((b, i) => {
    const lat =
      b.p50_ms === undefined
        ? 'no successes'
        : `min ${round(b.min_ms, 1)} ms, p50 ${round(b.p50_ms, 1)} ms, p99 ${round(b.p99_ms, 1)} ms`;
    say(
      `  burst ${i + 1}: ${lat}, wall ${round(b.wall_ms, 1)} ms${b.errors ? `, ${b.errors} errors, first: ${b.first_error}` : ''}`,
    );
  });
  say(
    `server RSS: before ${rss.before_mb} MB, after bursts ${rss.after_burst_mb.join(' / ')} MB, ` +
      `2 s later ${rss.after_idle_2s_mb} MB — ${rss.flat ? 'flat' : `grew ${growth} MB burst 1→${burstCount}`} ${mark(rss.flat)}`,
  );
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
