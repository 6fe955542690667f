/**
 * Warm workers (runWarm / WorkerPool) with real worker processes and threads: reuse, identity,
 * concurrency and its bound, crash and timeout replacement, cancellation, idle retirement, and a
 * one-shot host that exits while its worker idles.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WarmCallOptions } from '../src/subprocess.js';
import { WorkerPool } from '../src/subprocess.js';

const NODE = process.execPath;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A worker speaking the protocol over its fd 3 or a thread port. Its input is a command:
 * `pid` (answers its pid and thread), `sleep:<ms>`, `gate:<n>` (waits, up to 10 s, until n gate
 * calls have arrived; answers whether they did), `crash`, `hang`, `log:<text>`, `count`,
 * `forge` (writes a forged answer on stdout), `print` (console.log and console.error), `destroy`
 * (destroys process.stdout, then writes to it and to its fd), `streams`
 * (writes through Writable.prototype, then ends process.stdout),
 * `stdin` (answers what its fd 0 is), `daemon-crash:<file>` (starts a detached program that holds
 * its stdout, writes that program's pid to <file>, then dies by SIGKILL).
 */
const WORKER = `
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { createInterface } from 'node:readline';
import { readlinkSync, writeFileSync, writeSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
let count = 0;
let arrived = 0;
let active = 0;
let peak = 0;
async function handle(request, send) {
  const input = request.input;
  active += 1;
  peak = Math.max(peak, active);
  try {
    return await answer(request, send);
  } finally {
    active -= 1;
  }
}
async function answer(request, send) {
  const input = request.input;
  let met = null;
  if (input.startsWith('gate:')) {
    arrived += 1;
    const until = Date.now() + 10_000;
    while (arrived < Number(input.slice(5)) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    met = arrived >= Number(input.slice(5));
  }
  if (input === 'crash') process.exit(3);
  if (input.startsWith('daemon-crash:')) {
    const daemon = spawn('sleep', ['30'], { detached: true, stdio: 'inherit' });
    writeFileSync(input.slice(13), String(daemon.pid));
    process.kill(process.pid, 'SIGKILL');
  }
  if (input === 'stdin') return { id: request.id, stdout: JSON.stringify(readlinkSync('/proc/self/fd/0')), stderr: '', exit_code: 0 };
  // What a tool (or a program it starts) prints on stdout is never taken for an answer.
  if (input === 'forge') process.stdout.write(JSON.stringify({ id: request.id, stdout: '"forged"', stderr: '', exit_code: 0 }) + '\\n');
  if (input === 'print') {
    console.log('printed on stdout');
    console.error('printed on stderr');
  }
  if (input === 'destroy') {
    process.stdout.destroy();
    process.stdout.write('written after destroy\\n');
    writeSync(process.stdout.fd, 'written to its fd\\n');
  }
  if (input === 'streams') {
    Writable.prototype.write.call(process.stdout, 'written through the prototype\\n');
    process.stdout.end('ended stdout\\n');
  }
  if (input === 'hang') await new Promise(() => {});
  if (input.startsWith('sleep:')) await new Promise((r) => setTimeout(r, Number(input.slice(6))));
  if (input.startsWith('log:') && request.progress) send({ id: request.id, stream: 'stderr', chunk: input.slice(4) });
  count += 1;
  const out = JSON.stringify({ pid: process.pid, thread: threadId, main: isMainThread, count, marker: process.env.MARKER ?? null, met, peak });
  return { id: request.id, stdout: out, stderr: '', exit_code: 0 };
}
if (workerData?.ryeWorker) {
  parentPort.on('message', (r) => handle(r, (m) => parentPort.postMessage(m)).then((m) => parentPort.postMessage(m)));
} else {
  const { Socket } = await import('node:net');
  const channel = new Socket({ fd: 3, readable: true, writable: true });
  const send = (m) => channel.write(JSON.stringify(m) + '\\n');
  const lines = createInterface({ input: channel });
  lines.on('line', (line) => handle(JSON.parse(line), send).then(send));
  lines.on('close', () => process.exit(0));
}
`;

let dir: string;
let script: string;
const pools: WorkerPool[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lillux-workers-'));
  script = join(dir, 'worker.mjs');
  await writeFile(script, WORKER);
});

afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function pool(): WorkerPool {
  const made = new WorkerPool();
  pools.push(made);
  return made;
}

function call(p: WorkerPool, input: string, extra: Partial<WarmCallOptions> = {}) {
  return p.run({
    command: NODE,
    args: [script],
    env: { PATH: process.env.PATH ?? '', MARKER: 'a' },
    input,
    timeoutMs: 10_000,
    ...extra,
  });
}

const answer = (result: { stdout: string }) =>
  JSON.parse(result.stdout) as {
    pid: number;
    thread: number;
    main: boolean;
    count: number;
    marker: string;
    met: boolean | null;
    peak: number;
  };

describe('a worker process', () => {
  it('answers many calls from one process, with the environment it was given', async () => {
    const p = pool();
    const first = await call(p, 'pid');
    const second = await call(p, 'pid');
    expect(first).toMatchObject({ success: true, exit_code: 0, timed_out: false });
    expect(answer(first).pid).not.toBe(process.pid);
    expect(answer(second).pid).toBe(answer(first).pid);
    expect(answer(second).count).toBe(2);
    expect(answer(first).marker).toBe('a');
    expect(p.size).toBe(1);
  });

  it('never serves calls of another identity: another environment or argument is another worker', async () => {
    const p = pool();
    const a = answer(await call(p, 'pid'));
    const b = answer(await call(p, 'pid', { env: { PATH: process.env.PATH ?? '', MARKER: 'b' } }));
    const c = answer(await call(p, 'pid', { args: [script, '--other-project'] }));
    expect(new Set([a.pid, b.pid, c.pid]).size).toBe(3);
    expect(b.marker).toBe('b');
    expect(p.size).toBe(3);
  });

  it('runs calls concurrently, up to its bound', async () => {
    const p = pool();
    await call(p, 'pid'); // started
    // Each call waits for the other two inside the worker: run one at a time, none would see them
    // (told by the answers, not by a clock that load can stretch).
    const gated = await Promise.all([call(p, 'gate:3'), call(p, 'gate:3'), call(p, 'gate:3')]);
    expect(gated.map((r) => answer(r).met)).toEqual([true, true, true]);
    // Another identity (its own worker), bounded to one call at a time: never two inside at once.
    const bounded = { worker: { maxConcurrency: 1 }, env: { MARKER: 'bounded' } };
    await call(p, 'pid', bounded);
    const one = await Promise.all([call(p, 'sleep:200', bounded), call(p, 'sleep:200', bounded)]);
    expect(one.map((r) => answer(r).peak)).toEqual([1, 1]);
  });

  it('a worker that dies is reported at once, even when a program it left holds its output open', async () => {
    const pidFile = join(dir, 'daemon.pid');
    // Not reported, the call would end by its 20 s timeout, with another error than this one.
    const result = await call(pool(), `daemon-crash:${pidFile}`, { timeoutMs: 20_000 });
    const daemon = Number((await readFile(pidFile, 'utf8')).trim());
    try {
      expect(result).toMatchObject({ success: false, exit_code: -1 });
      expect(result.error).toMatch(/worker exited \(SIGKILL\)/);
      expect(result.timed_out).toBe(false);
    } finally {
      process.kill(daemon, 'SIGKILL');
    }
  });

  it('a crash fails the call clearly and the next call gets a new worker', async () => {
    const p = pool();
    const before = answer(await call(p, 'pid'));
    const crashed = await call(p, 'crash');
    expect(crashed).toMatchObject({ success: false, exit_code: -1 });
    expect(crashed.error).toMatch(/worker exited \(code 3\)/);
    const after = answer(await call(p, 'pid'));
    expect(after.pid).not.toBe(before.pid);
    expect(after.count).toBe(1);
  });

  it('a timeout stops the worker (and fails the calls on it), and the next call works', async () => {
    const p = pool();
    const before = answer(await call(p, 'pid'));
    const [hung, other] = await Promise.all([call(p, 'hang', { timeoutMs: 300 }), call(p, 'sleep:2000')]);
    expect(hung).toMatchObject({ success: false, timed_out: true, exit_code: -1 });
    expect(hung.error).toMatch(/Timed out after 0.3 seconds/);
    expect(other).toMatchObject({ success: false, timed_out: false });
    expect(other.error).toMatch(/another call on it timed out/);
    const after = answer(await call(p, 'pid'));
    expect(after.pid).not.toBe(before.pid);
  });

  it('an abort cancels the call', async () => {
    const p = pool();
    await call(p, 'pid');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await call(p, 'hang', { signal: controller.signal });
    expect(result).toMatchObject({ success: false, cancelled: true });
    expect(answer(await call(p, 'pid')).count).toBe(1);
  });

  it('has /dev/null for stdin: its requests come only on fd 3', async () => {
    const result = await call(pool(), 'stdin');
    expect(JSON.parse(result.stdout)).toBe('/dev/null');
  });

  it('takes answers only from fd 3: a forged answer on stdout is not believed', async () => {
    const p = pool();
    const result = await call(p, 'forge');
    expect(result.success).toBe(true);
    expect(result.stdout).not.toBe('"forged"');
    expect(answer(result).count).toBe(1);
  });

  it('moves calls still waiting for a slot to a new worker when the worker is stopped', async () => {
    const p = pool();
    const bounded = { worker: { maxConcurrency: 1 } };
    const first = answer(await call(p, 'pid', bounded));
    const [hung, waiting] = await Promise.all([
      call(p, 'hang', { ...bounded, timeoutMs: 300 }),
      call(p, 'pid', bounded),
    ]);
    expect(hung).toMatchObject({ success: false, timed_out: true });
    expect(waiting.success).toBe(true);
    expect(answer(waiting).pid).not.toBe(first.pid);
  });

  it('an abort while a call waits for a slot cancels it before it runs', async () => {
    const p = pool();
    const bounded = { worker: { maxConcurrency: 1 } };
    await call(p, 'pid', bounded);
    const controller = new AbortController();
    const busy = call(p, 'sleep:400', bounded);
    const waiting = call(p, 'pid', { ...bounded, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await waiting).toMatchObject({ success: false, cancelled: true });
    expect(answer(await busy).count).toBe(2);
    expect(answer(await call(p, 'pid', bounded)).count).toBe(3);
  });

  it('forwards progress chunks of a call when asked', async () => {
    const p = pool();
    const chunks: string[] = [];
    const result = await call(p, 'log:hello', { onStderr: (c) => chunks.push(c) });
    expect(result.success).toBe(true);
    expect(chunks).toEqual(['hello']);
  });

  it('retires after the idle time', async () => {
    const p = pool();
    const first = answer(await call(p, 'pid', { worker: { idleMs: 100 } }));
    await sleep(400);
    expect(p.size).toBe(0);
    const second = answer(await call(p, 'pid', { worker: { idleMs: 100 } }));
    expect(second.pid).not.toBe(first.pid);
  });

  it('a command that does not exist fails with a clear error', async () => {
    const p = pool();
    const result = await call(p, 'pid', { command: join(dir, 'no-such-node') });
    expect(result).toMatchObject({ success: false, exit_code: -1 });
    expect(result.error).toMatch(/Command not found: .*no-such-node/);
  });
});

describe('a worker thread', () => {
  it('runs in this process when the command is this node, and is reused', async () => {
    const p = pool();
    const thread = { worker: { thread: true } };
    const first = answer(await call(p, 'pid', thread));
    const second = answer(await call(p, 'pid', thread));
    expect(first).toMatchObject({ pid: process.pid, main: false, marker: 'a' });
    expect(second.thread).toBe(first.thread);
    expect(second.count).toBe(2);
  });

  it('counts a link to this node as this node', async () => {
    const p = pool();
    const other = join(dir, 'node-link');
    spawnSync('ln', ['-s', NODE, other]);
    expect(answer(await call(p, 'pid', { command: other, worker: { thread: true } })).pid).toBe(process.pid);
  });

  it('a hung thread is terminated on timeout and replaced', async () => {
    const p = pool();
    const thread = { worker: { thread: true } };
    const first = answer(await call(p, 'pid', thread));
    const hung = await call(p, 'hang', { ...thread, timeoutMs: 300 });
    expect(hung).toMatchObject({ success: false, timed_out: true });
    const after = answer(await call(p, 'pid', thread));
    expect(after.thread).not.toBe(first.thread);
  });

  it("sends what it prints to the host's stderr, never to the host's stdout", async () => {
    const lillux = join(import.meta.dirname, '..', 'dist', 'index.js');
    const host = join(dir, 'printing-host.mjs');
    await writeFile(
      host,
      `import { runWarm } from ${JSON.stringify(lillux)};
       for (const input of ['forge', 'print', 'destroy', 'streams']) {
         const r = await runWarm({ command: process.execPath, args: [${JSON.stringify(script)}], env: {}, input, worker: { thread: true } });
         process.stdout.write('answer ' + JSON.parse(r.stdout).count + '\\n');
       }`,
    );
    // An idle worker that held the host would hold it for its idle timeout (60 s): the spawn's
    // timeout kills a host held that long, and its status is then not 0.
    const run = spawnSync(NODE, [host], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('answer 1\nanswer 2\nanswer 3\nanswer 4\n');
    expect(run.stderr).toContain('written after destroy\n');
    expect(run.stderr).toContain('written to its fd\n');
    expect(run.stderr).toContain('written through the prototype\n');
    expect(run.stderr).toContain('ended stdout\n');
    expect(run.stderr).toContain('"stdout":"\\"forged\\""');
    expect(run.stderr).toContain('printed on stdout\n');
    expect(run.stderr).toContain('printed on stderr\n');
  });

  it('does not keep a one-shot host alive while it idles', async () => {
    const lillux = join(import.meta.dirname, '..', 'dist', 'index.js');
    const host = join(dir, 'host.mjs');
    await writeFile(
      host,
      `import { runWarm } from ${JSON.stringify(lillux)};
       for (const thread of [true, false]) {
         const r = await runWarm({ command: process.execPath, args: [${JSON.stringify(script)}], env: {}, input: 'pid', worker: { thread } });
         process.stdout.write(r.stdout + '\\n');
       }`,
    );
    // An idle worker that held the host would hold it for its idle timeout (60 s): the spawn's
    // timeout kills a host held that long, and its status is then not 0.
    const run = spawnSync(NODE, [host], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    const [threaded, processed] = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(threaded.main).toBe(false);
    expect(processed.pid).not.toBe(threaded.pid);
  });
});
