// A warm python script tool (rye/core/runtimes/python/script) with and without
// PYTHONDONTWRITEBYTECODE=1 in the host's environment (issue 28, point 22). The runtime's private
// bytecode cache (PYTHONPYCACHEPREFIX) must be reused in both cases: the two medians should be
// within 1.2x of each other. Each case gets a fresh user space, so neither warms the other's cache.
// Run after `pnpm build`: node bench/python-bytecode.mjs (or node bench/run.mjs python-bytecode)
// (BENCH_RUNS=n, default 20)
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
import { median, round, SYSTEM_BUNDLES } from './lib/common.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);

// Imports the standard-library modules a typical tool uses, so a cache that is not reused shows.
const TOOL = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "bench"
__tool_description__ = "Echo the parameters"
import argparse, json, sys, pathlib, datetime, subprocess, typing, dataclasses, urllib.request, email.utils

print(json.dumps({"success": True, "echo": json.loads(sys.stdin.read() or "{}")}))
`;

async function executorFor(root, name, extraEnv) {
  const project = join(root, `project-${name}`);
  const user = join(root, `user-${name}`);
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  await writeFile(join(project, '.ai', 'tools', 'bench', 'py.py'), TOOL);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, USER_SPACE: user, ...extraEnv };
  const executor = await Executor.create({
    projectPath: project,
    userSpace: user,
    systemBundles: SYSTEM_BUNDLES,
    env,
  });
  const key = await generateSigningKey(signingKeyDir(user, env));
  await trustKey(executor.spaces.user, key.publicKeyPem);
  const signed = await signItems(executor, 'tool:bench/py', { keyPair: key, env });
  if (signed.failed.length) throw new Error(JSON.stringify(signed.failed));
  return { executor, project };
}

async function timeTool(executor) {
  const start = performance.now();
  const result = await executor.executeTool('bench/py', { n: 1 });
  if (result.status !== 'success') throw new Error(JSON.stringify(result));
  return performance.now() - start;
}

function timePython(script, env) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn('python3', [script], { env, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`exit ${code}`)),
    );
    child.stdin.end('{}');
  });
}

export async function run() {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-py-'));
  try {
    const writes = await executorFor(root, 'writes', {});
    const forbids = await executorFor(root, 'forbids', { PYTHONDONTWRITEBYTECODE: '1' });
    const script = join(root, 'plain.py');
    await writeFile(script, TOOL);
    // Warm-up: the first run of each fills what it is allowed to fill.
    for (let i = 0; i < 2; i++) {
      await timeTool(writes.executor);
      await timeTool(forbids.executor);
    }
    const samples = { writes: [], forbids: [], plain: [] };
    for (let i = 0; i < RUNS; i++) {
      samples.writes.push(await timeTool(writes.executor));
      samples.forbids.push(await timeTool(forbids.executor));
      samples.plain.push(await timePython(script, { PATH: process.env.PATH }));
    }
    const [w, f, p] = [median(samples.writes), median(samples.forbids), median(samples.plain)];
    return {
      bench: 'python-bytecode',
      runs: RUNS,
      median_ms_warm_tool: round(w),
      median_ms_warm_tool_dontwritebytecode: round(f),
      ratio: round(f / w),
      median_ms_plain_python3: round(p),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
