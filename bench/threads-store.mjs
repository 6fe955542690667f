// The thread store (issue 13, spec threads §2): registry writes/s in one process through the
// async ThreadStore interface (register + updateStatus + updateCostSnapshot, each a committed write), and budget-ledger
// child cycles/s with 8 processes sharing one parent budget (reserve + reportActual +
// cascadeSpend + release, the finalize path of spec §1 step 15), checked for lost updates at the end.
// Run after `pnpm build`: node bench/threads-store.mjs
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openThreadStore } from '../packages/threads/dist/index.js';

const DIST = pathToFileURL(join(import.meta.dirname, '..', 'packages', 'threads', 'dist', 'index.js')).href;
const PROCESSES = 8;
const CYCLES_PER_PROCESS = 1500;
const SPEND = 1 / 1024; // a binary fraction: the expected total is exact

async function registryWritesPerSecond(stateDir, threads = 3000) {
  const store = openThreadStore(stateDir);
  const cost = { turns: 1, input_tokens: 1000, output_tokens: 200, spend: 0.001, elapsed_seconds: 1 };
  try {
    const start = performance.now();
    for (let i = 0; i < threads; i++) {
      const id = `bench/registry/registry-${i}`;
      await store.registry.register(id, 'bench/registry');
      await store.registry.updateStatus(id, 'running');
      await store.registry.updateCostSnapshot(id, cost);
    }
    return (threads * 3) / ((performance.now() - start) / 1000);
  } finally {
    await store.close();
  }
}

// A worker: wait for "go", run its cycles as children of `root`, print its start and end times.
const worker = `
const { openThreadStore } = await import(process.env.BENCH_DIST);
const { stateDir, worker, cycles, spend } = JSON.parse(process.env.BENCH_JOB);
const store = openThreadStore(stateDir);
const { ledger } = store;
process.stdout.write('ready\\n');
for await (const _ of process.stdin) break;
const start = performance.timeOrigin + performance.now();
for (let i = 0; i < cycles; i++) {
  const child = 'root/w' + worker + '-' + i;
  await ledger.reserve(child, spend * 4, 'root');
  await ledger.reportActual(child, spend);
  await ledger.cascadeSpend(child, 'root');
  await ledger.release(child, 'completed');
}
const end = performance.timeOrigin + performance.now();
await store.close();
process.stdout.write(JSON.stringify({ start, end }) + '\\n');
`;

async function ledgerCyclesPerSecond(stateDir) {
  const store = openThreadStore(stateDir);
  await store.ledger.register('root', 1024);
  const children = Array.from({ length: PROCESSES }, (_, i) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', worker], {
      env: {
        ...process.env,
        BENCH_DIST: DIST,
        BENCH_JOB: JSON.stringify({ stateDir, worker: i, cycles: CYCLES_PER_PROCESS, spend: SPEND }),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
    });
    const done = new Promise((resolve, reject) =>
      child.on('close', (code) =>
        code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(code),
      ),
    );
    return { child, done, ready: () => out.startsWith('ready\n') };
  });
  while (!children.every((c) => c.ready())) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const { child } of children) child.stdin.end('go\n');
  const times = await Promise.all(children.map((c) => c.done));
  const seconds = (Math.max(...times.map((t) => t.end)) - Math.min(...times.map((t) => t.start))) / 1000;

  const cycles = PROCESSES * CYCLES_PER_PROCESS;
  const root = await store.ledger.get('root');
  const tree = await store.ledger.getTreeSpend('root');
  await store.close();
  const noLostUpdate =
    root.actual_spend === cycles * SPEND && tree.thread_count === cycles + 1 && tree.active_count === 1;
  if (!noLostUpdate)
    throw new Error(`lost update: root actual ${root.actual_spend}, expected ${cycles * SPEND}`);
  return { cycles, perSecond: cycles / seconds, noLostUpdate };
}

export async function run() {
  const dir = await mkdtemp(join(tmpdir(), 'rye-bench-store-'));
  try {
    const writes = await registryWritesPerSecond(join(dir, 'registry', '.ai', 'state', 'threads'));
    const ledger = await ledgerCyclesPerSecond(join(dir, 'ledger', '.ai', 'state', 'threads'));
    return {
      bench: 'threads-store',
      registry_writes_per_s: Math.round(writes),
      ledger_processes: PROCESSES,
      ledger_cycles: ledger.cycles,
      ledger_cycles_per_s: Math.round(ledger.perSecond),
      ledger_no_lost_update: ledger.noLostUpdate,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
