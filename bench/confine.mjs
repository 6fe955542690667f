// The added cost per tool call of Landlock confinement (RyeSettings.confine, as ryeos-remote sets
// it): a one-shot rye/bash call and a warm python function call, each with and without it.
// Run after `pnpm build`: node bench/confine.mjs   (BENCH_RUNS=n, default 40)
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readSettings } from '../packages/executor/dist/index.js';
import { closeWorkers, landlockSupport } from '../packages/lillux/dist/index.js';
import { createRye } from '../packages/ryeos/dist/index.js';
import { median, round } from './lib/common.mjs';

const RUNS = Math.max(10, Number(process.env.BENCH_RUNS) || 40);
const WARMUP = 3;
const REPO = join(import.meta.dirname, '..');

const FUNCTION_TOOL = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "bench"
__tool_description__ = "Echo n"
async def execute(params, project_path):
    return {"success": True, "n": params.get("n")}
`;

async function setup() {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'bench-confine-')));
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  await mkdir(user);
  await writeFile(join(project, '.ai', 'tools', 'bench', 'echo.py'), FUNCTION_TOOL);
  const env = { PATH: process.env.PATH, USER_SPACE: user, HOME: user, TMPDIR: join(root, 'tmp') };
  await mkdir(env.TMPDIR);
  const signer = createRye({ projectPath: project, env });
  await signer.generateKeys();
  const signed = await signer.sign('tool:bench/echo');
  if (signed.status === 'error') throw new Error(JSON.stringify(signed));
  const base = readSettings({ ...env, RYE_KERNEL_NODE: process.execPath });
  // What ryeos-remote gives a run: its folder to write, the system and the installation to read.
  const confine = {
    readOnly: [
      '/usr',
      '/bin',
      '/sbin',
      '/lib',
      '/lib64',
      '/etc',
      '/proc',
      '/sys',
      '/dev',
      dirname(dirname(process.execPath)),
      REPO,
    ],
    writable: [root, '/dev/null'],
  };
  // The real python runs the launcher, as ryeos-remote pins it (a pyenv shim costs ~70 ms more).
  const [python, prefix] = execFileSync(
    'python3',
    ['-c', 'import os, sys; print(os.path.realpath(sys.executable)); print(sys.base_prefix)'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');
  confine.python = python;
  confine.readOnly.push(prefix);
  return {
    root,
    plain: createRye({ projectPath: project, settings: base }),
    confined: createRye({ projectPath: project, settings: { ...base, confine } }),
  };
}

async function time(rye, request) {
  const start = performance.now();
  const envelope = await rye.execute(request);
  const elapsed = performance.now() - start;
  if (envelope.status !== 'success') throw new Error(JSON.stringify(envelope));
  return elapsed;
}

async function compare(label, plain, confined, request) {
  for (let i = 0; i < WARMUP; i++) {
    await time(plain, request);
    await time(confined, request);
  }
  const a = [];
  const b = [];
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, order alternated: drift under load hits both alike.
    if (i % 2) {
      a.push(await time(plain, request));
      b.push(await time(confined, request));
    } else {
      b.push(await time(confined, request));
      a.push(await time(plain, request));
    }
  }
  const without = median(a);
  const withIt = median(b);
  return {
    call: label,
    without_ms: round(without),
    with_ms: round(withIt),
    added_ms: round(withIt - without),
  };
}

export async function run() {
  const support = landlockSupport();
  if (support.abi === 0) return { skipped: support.why };
  const { root, plain, confined } = await setup();
  try {
    return {
      landlock_abi: support.abi,
      runs: RUNS,
      results: [
        await compare('rye/bash one-shot (bash -c true)', plain, confined, {
          item_id: 'tool:rye/bash',
          parameters: { command: 'true' },
        }),
        await compare('python function, warm worker', plain, confined, {
          item_id: 'tool:bench/echo',
          parameters: { n: 1 },
        }),
      ],
    };
  } finally {
    await closeWorkers();
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await run(), null, 2));
