// What tracing costs a cold CLI (issue 33): `rye --help` and `rye execute tool:rye/bash` of this
// build with nothing tracing (no tracer provider, no OTEL_EXPORTER_OTLP_ENDPOINT: no OpenTelemetry
// package is even resolved, as if none were installed; test/lazy.test.ts checks it), against
// another build (BENCH_BASELINE_CLI=<path to its dist/rye.cjs>, e.g. main's), and the same
// execute exporting its spans over OTLP to a receiver on 127.0.0.1 (the price when on).
// Interleaved runs, medians of BENCH_RUNS (default 20); an empty project and user space.
// Run after `pnpm build`: node bench/tracing-cold.mjs   (BENCH_CLI=<rye.cjs> measures another
// build; compare two builds laid out alike, e.g. two copies in one folder, as where a build lies
// changes its start-up by milliseconds)
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, RYE_BIN, round } from './lib/common.mjs';

const CLI = process.env.BENCH_CLI ? resolvePath(process.env.BENCH_CLI) : RYE_BIN;
const BASELINE = process.env.BENCH_BASELINE_CLI ? resolvePath(process.env.BENCH_BASELINE_CLI) : undefined;
const EXECUTE = ['execute', 'tool:rye/bash', '--params', '{"command": "true"}'];

function timed(cli, args, { cwd, env }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${cli} ${args.join(' ')} exited with ${code}: ${stderr}`));
      else resolve(performance.now() - start);
    });
  });
}

/** An OTLP/HTTP receiver on 127.0.0.1 that accepts and drops what it is sent. */
async function receiver() {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

export async function run({ runs = Number(process.env.BENCH_RUNS) || 20 } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-tracing-'));
  const otlp = await receiver();
  try {
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(join(project, '.ai'), { recursive: true });
    await mkdir(user, { recursive: true });
    // A clean environment: no OTEL_* or RYE_* of the caller's.
    const env = { PATH: process.env.PATH, HOME: user, USER_SPACE: user };
    const options = { cwd: project, env };
    const traced = { cwd: project, env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } };
    const cases = {
      help: () => timed(CLI, ['--help'], options),
      execute: () => timed(CLI, EXECUTE, options),
      execute_traced: () => timed(CLI, EXECUTE, traced),
      ...(BASELINE
        ? {
            baseline_help: () => timed(BASELINE, ['--help'], options),
            baseline_execute: () => timed(BASELINE, EXECUTE, options),
          }
        : {}),
    };
    const names = Object.keys(cases);
    const times = Object.fromEntries(names.map((name) => [name, []]));
    for (const name of names) await cases[name](); // warm the OS file cache once, for all alike
    for (let i = 0; i < runs; i++) {
      // Rotated order, so no case always runs right after another.
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length];
        times[name].push(await cases[name]());
      }
    }
    const m = Object.fromEntries(names.map((name) => [name, round(median(times[name]), 1)]));
    return [
      {
        bench: 'tracing_cold_cli',
        runs,
        median_ms_help: m.help,
        median_ms_execute: m.execute,
        median_ms_execute_traced_otlp: m.execute_traced,
        ...(BASELINE
          ? {
              baseline_median_ms_help: m.baseline_help,
              baseline_median_ms_execute: m.baseline_execute,
              help_minus_baseline_ms: round(m.help - m.baseline_help, 1),
              execute_minus_baseline_ms: round(m.execute - m.baseline_execute, 1),
            }
          : {}),
      },
    ];
  } finally {
    await otlp.close();
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await run()) console.log(JSON.stringify(line));
}
