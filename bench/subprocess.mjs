// Per-call overhead of lillux's runSubprocess over a bare child_process.spawn of the same command.
// Run after `pnpm build`: node bench/subprocess.mjs   (BENCH_RUNS=n to change the run count, min 50)
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { runSubprocess } from '../packages/lillux/dist/index.js';

const GOAL = 1.1;
const WARMUP = 5;
const COMMAND = process.execPath;
const ARGS = ['-e', '0'];

const noop = () => {};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round = (value, digits = 3) => Number(value.toFixed(digits));

/** Bare spawn, output piped and drained like runSubprocess does, awaited until 'close'. */
function timeSpawn() {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(COMMAND, ARGS, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', noop);
    child.stderr.on('data', noop);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`bare spawn exited with ${code}`));
      else resolve(performance.now() - start);
    });
  });
}

async function timeLillux() {
  const start = performance.now();
  const result = await runSubprocess({ command: COMMAND, args: ARGS });
  const elapsed = performance.now() - start;
  if (!result.success) throw new Error(`runSubprocess failed: ${result.error ?? result.stderr}`);
  return elapsed;
}

/** Interleaved warm runs (order alternated every run); returns the summary object. */
export async function run({ runs = Math.max(50, Number(process.env.BENCH_RUNS) || 50) } = {}) {
  for (let i = 0; i < WARMUP; i++) {
    await timeLillux();
    await timeSpawn();
  }
  const lillux = [];
  const bare = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      lillux.push(await timeLillux());
      bare.push(await timeSpawn());
    } else {
      bare.push(await timeSpawn());
      lillux.push(await timeLillux());
    }
  }
  const medianLillux = median(lillux);
  const medianSpawn = median(bare);
  return {
    bench: 'subprocess_overhead',
    runs,
    median_ms_lillux: round(medianLillux),
    median_ms_spawn: round(medianSpawn),
    ratio: round(medianLillux / medianSpawn),
    goal: GOAL,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
