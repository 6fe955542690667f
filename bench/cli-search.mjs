// `rye search` from the command line (issue 11): what `rye search tool 'read file'` puts first,
// and a cold `rye search tool read` (a new process each time: CLI start, executor, index of the
// system bundle, query) against a cold `rye --help` (CLI start only), interleaved, medians of
// BENCH_RUNS (default 20). Every run uses an empty project and an empty user space in a temp dir.
// Run after `pnpm build`: node bench/cli-search.mjs   (BENCH_CLI=<cli.js> measures another build)
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, RYE_BIN, round } from './lib/common.mjs';

const CLI = process.env.BENCH_CLI ? resolvePath(process.env.BENCH_CLI) : RYE_BIN;

function rye(args, { cwd, env }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - start;
      if (code !== 0) reject(new Error(`rye ${args.join(' ')} exited with ${code}: ${stderr || stdout}`));
      else resolve({ ms, stdout });
    });
  });
}

export async function run({ runs = Number(process.env.BENCH_RUNS) || 20 } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-cli-search-'));
  try {
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(project, { recursive: true });
    await mkdir(user, { recursive: true });
    // A clean environment: nothing from the caller's RYE_* settings or home directory.
    const env = { PATH: process.env.PATH, HOME: user, USER_SPACE: user };
    const options = { cwd: project, env };

    const { stdout } = await rye(['search', 'tool', 'read file'], options);
    const found = JSON.parse(stdout);
    const results = found.results ?? [];
    const top = results.slice(0, 5).map((r) => r.id);
    // Size of one result as printed (2-space JSON), averaged: how compact the results are.
    const meanResultBytes = results.length
      ? round(results.reduce((sum, r) => sum + JSON.stringify(r, null, 2).length, 0) / results.length, 0)
      : 0;

    const search = [];
    const help = [];
    await rye(['--help'], options); // warm the OS file cache once, for both alike
    for (let i = 0; i < runs; i++) {
      const order = i % 2 === 0 ? ['search', 'help'] : ['help', 'search'];
      for (const which of order) {
        if (which === 'search') search.push((await rye(['search', 'tool', 'read'], options)).ms);
        else help.push((await rye(['--help'], options)).ms);
      }
    }
    return [
      {
        bench: 'cli_search_ranking',
        command: "rye search tool 'read file'",
        top_result: top[0] ?? null,
        top5: top,
        total: found.total,
        hidden: found.hidden ?? 0,
        mean_result_bytes: meanResultBytes,
      },
      {
        bench: 'cli_search_cold',
        runs,
        median_ms_search: round(median(search), 1),
        median_ms_help: round(median(help), 1),
        search_minus_help_ms: round(median(search) - median(help), 1),
      },
    ];
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await run()) console.log(JSON.stringify(line));
}
