// wait_threads (spec threads §10.5) against a real registry.db: threads finished by this process
// and by other processes (node --import tsx, as in store-processes.test.ts), timeouts, unknown
// ids, aborts, continuation chains, and that a finished wait leaves nothing running.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isRyeError } from '@ryeos/lillux';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESULT_GRACE_MS, waitThreads } from '../src/orchestration/wait.js';
import { threadsStateRoot } from '../src/persistence/paths.js';
import { openThreadStore, type ThreadStore } from '../src/store/index.js';

const PACKAGE_DIR = join(import.meta.dirname, '..');
const STORE_MODULE = pathToFileURL(join(PACKAGE_DIR, 'src', 'store', 'index.ts')).href;
const WAIT_MODULE = pathToFileURL(join(PACKAGE_DIR, 'src', 'orchestration', 'wait.ts')).href;
const COST = { turns: 1, input_tokens: 10, output_tokens: 5, spend: 0.001, elapsed_seconds: 0.2 };

let project: string;
let stateRoot: string;
let store: ThreadStore;
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'rye-orch-wait-'));
  stateRoot = threadsStateRoot(project);
  store = openThreadStore(stateRoot);
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  store.close();
  rmSync(project, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function running(id: string): void {
  store.registry.register(id, 'd');
  store.registry.updateStatus(id, 'running');
}

/** The runner's finalize order (thread.ts): status first, then the result. */
function finish(
  id: string,
  status: 'completed' | 'error' | 'cancelled',
  result: Record<string, unknown>,
): void {
  store.registry.updateStatus(id, status);
  store.registry.setResult(id, result);
}

/** Starts a node process running `source` (an ES module, with tsx for the .ts imports). */
function startNode(
  source: string,
  args: string[] = [],
): {
  child: ChildProcessWithoutNullStreams;
  lines: AsyncIterator<string>;
  exited: Promise<number | null>;
} {
  const script = join(project, `script-${children.length}.mjs`);
  writeFileSync(script, source);
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: PACKAGE_DIR,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const queue: string[] = [];
  const waiting: ((line: IteratorResult<string>) => void)[] = [];
  let buffer = '';
  let ended = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const next = waiting.shift();
      if (next) next({ value: line, done: false });
      else queue.push(line);
    }
  });
  child.on('close', () => {
    ended = true;
    for (const next of waiting.splice(0)) next({ value: undefined, done: true });
  });
  const lines: AsyncIterator<string> = {
    next: () =>
      queue.length
        ? Promise.resolve({ value: queue.shift()!, done: false })
        : ended
          ? Promise.reject(new Error(`process ended: ${stderr}`))
          : new Promise((resolve) => waiting.push(resolve)),
  };
  return { child, lines, exited };
}

async function nextLine(lines: AsyncIterator<string>): Promise<string> {
  const { value, done } = await lines.next();
  if (done) throw new Error('the process closed its output');
  return value;
}

/** A process that finishes threads on request (updateStatus, then setResult, like the runner). */
const FINISHER = `
import { createInterface } from 'node:readline';
const { openThreadStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = openThreadStore(process.argv[2]);
process.stdout.write('ready\\n');
for await (const line of createInterface({ input: process.stdin })) {
  const { id, outputs } = JSON.parse(line);
  await store.registry.updateStatus(id, 'completed');
  await store.registry.setResult(id, { cost: { turns: 1, spend: 0 }, outputs });
  process.stdout.write(JSON.stringify({ id, at: Date.now() }) + '\\n');
}
store.close();
`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('waitThreads', () => {
  it('returns at once when every thread is already final; success only when all completed', async () => {
    running('d/a-1');
    running('d/b-2');
    finish('d/a-1', 'completed', { cost: COST, outputs: { n: 1 } });
    finish('d/b-2', 'error', { cost: COST, error: 'boom' });
    const started = performance.now();
    const both = await waitThreads(project, ['d/a-1', 'd/b-2'], { pollMs: 60_000 });
    // Waiting for a poll would take 60 s: a bound far below it, far above a loaded machine's answer.
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(both).toEqual({
      success: false,
      results: {
        'd/a-1': { status: 'completed', thread_id: 'd/a-1', outputs: { n: 1 }, cost: COST },
        'd/b-2': { status: 'error', thread_id: 'd/b-2', cost: COST, error: 'boom' },
      },
    });
    expect((await waitThreads(project, ['d/a-1'])).success).toBe(true);
  });

  it('sees a thread finished by another process within milliseconds (the watch path, not the poll)', async () => {
    const finisher = startNode(FINISHER, [stateRoot]);
    expect(await nextLine(finisher.lines)).toBe('ready');
    const latencies: number[] = [];
    for (let round = 0; round < 5; round++) {
      const id = `d/x-${round}`;
      running(id);
      const started = Date.now();
      // The poll alone would take 20 s: only the watch can make this fast.
      const wait = waitThreads(project, [id], { pollMs: 20_000, timeoutSeconds: 30 });
      let resolvedAt = 0;
      void wait.then(() => {
        resolvedAt = Date.now();
      });
      await sleep(30);
      finisher.child.stdin.write(`${JSON.stringify({ id, outputs: { round } })}\n`);
      const { at } = JSON.parse(await nextLine(finisher.lines)) as { at: number };
      const result = await wait;
      // Both the status and the result (committed after it) are reported.
      expect(result).toEqual({
        success: true,
        results: {
          [id]: { status: 'completed', thread_id: id, outputs: { round }, cost: { turns: 1, spend: 0 } },
        },
      });
      expect(resolvedAt - started).toBeLessThan(10_000);
      latencies.push(Math.max(0, resolvedAt - at));
    }
    finisher.child.stdin.end();
    expect(await finisher.exited).toBe(0);
    // Goal < 100 ms (measured); asserted only against the 20 s poll, which load cannot blur.
    expect(median(latencies)).toBeLessThan(10_000);
  }, 60_000);

  it('times out: an unfinished thread is timeout (with its last status), an unknown id not_found', async () => {
    running('d/slow-1');
    await store.registry.register('d/new-2', 'd');
    const started = performance.now();
    const result = await waitThreads(project, ['d/slow-1', 'd/new-2', 'd/ghost-3'], {
      timeoutSeconds: 0.3,
      pollMs: 50,
    });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(280);
    // Without its timeout the wait would never end.
    expect(elapsed).toBeLessThan(15_000);
    expect(result).toEqual({
      success: false,
      results: {
        'd/slow-1': { status: 'timeout', thread_id: 'd/slow-1', last_status: 'running' },
        'd/new-2': { status: 'timeout', thread_id: 'd/new-2', last_status: 'created' },
        'd/ghost-3': { status: 'not_found', thread_id: 'd/ghost-3' },
      },
    });
  });

  it('checks once with timeoutSeconds 0', async () => {
    running('d/slow-1');
    const result = await waitThreads(project, ['d/slow-1'], { timeoutSeconds: 0 });
    expect(result.results['d/slow-1']).toMatchObject({ status: 'timeout', last_status: 'running' });
  });

  it('keeps waiting for an id registered after the wait began', async () => {
    const wait = waitThreads(project, ['d/late-1'], { timeoutSeconds: 10, pollMs: 20_000 });
    await sleep(100);
    running('d/late-1');
    await sleep(50);
    finish('d/late-1', 'cancelled', { cost: COST, killed: true });
    expect(await wait).toEqual({
      success: false,
      results: { 'd/late-1': { status: 'cancelled', thread_id: 'd/late-1', cost: COST } },
    });
  });

  it('waits in a project whose registry does not exist yet, and creates nothing itself', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'rye-orch-wait-empty-'));
    try {
      const none = await waitThreads(empty, ['d/a-1'], { timeoutSeconds: 0.1, pollMs: 20 });
      expect(none.results['d/a-1']).toEqual({ status: 'not_found', thread_id: 'd/a-1' });
      expect(readdirSync(empty)).toEqual([]);
      const wait = waitThreads(empty, ['d/a-1'], { timeoutSeconds: 10, pollMs: 50 });
      await sleep(100);
      const other = openThreadStore(threadsStateRoot(empty));
      try {
        await other.registry.register('d/a-1', 'd');
        await other.registry.updateStatus('d/a-1', 'completed');
        await other.registry.setResult('d/a-1', { cost: COST });
      } finally {
        other.close();
      }
      expect((await wait).results['d/a-1']).toEqual({ status: 'completed', thread_id: 'd/a-1', cost: COST });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('follows a handoff to the end of the continuation chain', async () => {
    running('d/h-1');
    let resolved = false;
    const wait = waitThreads(project, ['d/h-1'], { timeoutSeconds: 10, pollMs: 20 });
    void wait.then(() => {
      resolved = true;
    });
    await sleep(60);
    running('d/h-2');
    await store.registry.setContinuation('d/h-1', 'd/h-2');
    await store.registry.setChainInfo('d/h-2', 'd/h-1', 'd/h-1');
    await store.registry.setResult('d/h-1', { cost: COST });
    await sleep(150);
    expect(resolved).toBe(false); // the old thread is `continued`; its continuation still runs
    finish('d/h-2', 'completed', { cost: COST, outputs: { done: true } });
    expect(await wait).toEqual({
      success: true,
      results: {
        'd/h-1': {
          status: 'completed',
          thread_id: 'd/h-2',
          resolved_from: 'd/h-1',
          outputs: { done: true },
          cost: COST,
        },
      },
    });
  });

  it('waits briefly for the result of a thread whose final status is committed first', async () => {
    running('d/r-1');
    await store.registry.updateStatus('d/r-1', 'completed');
    const started = performance.now();
    const wait = waitThreads(project, ['d/r-1'], { timeoutSeconds: 10, pollMs: 20_000 });
    await sleep(150);
    await store.registry.setResult('d/r-1', { cost: COST, outputs: { k: 'v' } });
    expect((await wait).results['d/r-1']).toEqual({
      status: 'completed',
      thread_id: 'd/r-1',
      outputs: { k: 'v' },
      cost: COST,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    // A result that never comes: reported without it after the grace period.
    running('d/r-2');
    await store.registry.updateStatus('d/r-2', 'error');
    const bare = await waitThreads(project, ['d/r-2'], { timeoutSeconds: 10, pollMs: 20_000 });
    expect(bare.results['d/r-2']).toEqual({ status: 'error', thread_id: 'd/r-2' });
    expect(RESULT_GRACE_MS).toBeLessThanOrEqual(1000);
  });

  it('rejects with the signal reason when aborted, and at once for an aborted signal', async () => {
    running('d/ab-1');
    const controller = new AbortController();
    const wait = waitThreads(project, ['d/ab-1'], { signal: controller.signal, pollMs: 20 });
    await sleep(50);
    const reason = new Error('parent cancelled');
    controller.abort(reason);
    await expect(wait).rejects.toBe(reason);
    await expect(waitThreads(project, ['d/ab-1'], { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('refuses invalid arguments (VALIDATION)', async () => {
    for (const run of [
      () => waitThreads(project, []),
      () => waitThreads(project, [''] as string[]),
      () => waitThreads(project, ['d/a-1'], { timeoutSeconds: -1 }),
      () => waitThreads(project, ['d/a-1'], { timeoutSeconds: Number.NaN }),
      () => waitThreads(project, ['d/a-1'], { pollMs: 0 }),
    ]) {
      const error = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRyeError(error) && error.code).toBe('VALIDATION');
    }
  });

  it.skipIf(process.platform !== 'linux')(
    'closes its file watch on every way out (resolved, timed out, aborted)',
    async () => {
      /** inotify watches this process holds on the state root folder (from /proc/self/fdinfo). */
      const watchesOnRoot = () => {
        const ino = `ino:${statSync(stateRoot).ino.toString(16)} `;
        let count = 0;
        for (const fd of readdirSync('/proc/self/fd')) {
          let target: string;
          try {
            target = readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            continue;
          }
          if (!target.includes('inotify')) continue;
          const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
          count += info.split('\n').filter((line) => line.startsWith('inotify') && line.includes(ino)).length;
        }
        return count;
      };
      running('d/w-1');
      const before = watchesOnRoot();
      const pending = waitThreads(project, ['d/w-1'], { timeoutSeconds: 10, pollMs: 20_000 });
      await sleep(30);
      expect(watchesOnRoot()).toBe(before + 1);
      finish('d/w-1', 'completed', { cost: COST });
      await pending;
      expect(watchesOnRoot()).toBe(before);

      running('d/w-2');
      await waitThreads(project, ['d/w-2'], { timeoutSeconds: 0.1, pollMs: 20_000 });
      expect(watchesOnRoot()).toBe(before);

      const controller = new AbortController();
      const aborted = waitThreads(project, ['d/w-2'], { signal: controller.signal, pollMs: 20_000 });
      await sleep(30);
      controller.abort();
      await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
      expect(watchesOnRoot()).toBe(before);
    },
  );

  it('never keeps the process alive once it has resolved (resolved, timed out, aborted)', async () => {
    // With a 60 s poll and a 600 s timeout, a leftover timer would keep this process running.
    const script = `
const { openThreadStore } = await import(${JSON.stringify(STORE_MODULE)});
const { waitThreads } = await import(${JSON.stringify(WAIT_MODULE)});
const [project, stateRoot] = process.argv.slice(2);
const store = openThreadStore(stateRoot);
await store.registry.register('d/p-1', 'd');
const done = waitThreads(project, ['d/p-1'], { pollMs: 60000 });
setTimeout(async () => {
  await store.registry.updateStatus('d/p-1', 'completed');
  await store.registry.setResult('d/p-1', { cost: {} });
}, 50);
process.stdout.write(JSON.stringify((await done).results['d/p-1'].status) + '\\n');
await store.registry.register('d/p-2', 'd');
const late = await waitThreads(project, ['d/p-2'], { pollMs: 60000, timeoutSeconds: 0.2 });
process.stdout.write(JSON.stringify(late.results['d/p-2'].status) + '\\n');
const controller = new AbortController();
const aborted = waitThreads(project, ['d/p-2'], { pollMs: 60000, signal: controller.signal });
setTimeout(() => controller.abort(), 50);
await aborted.catch((e) => process.stdout.write(JSON.stringify(e.name) + '\\n'));
await store.close();
process.stdout.write('end ' + Date.now() + '\\n');
`;
    const run = startNode(script, [project, stateRoot]);
    expect(await nextLine(run.lines)).toBe('"completed"');
    expect(await nextLine(run.lines)).toBe('"timeout"');
    expect(await nextLine(run.lines)).toBe('"AbortError"');
    const end = Number((await nextLine(run.lines)).split(' ')[1]);
    const code = await Promise.race([run.exited, sleep(5_000).then(() => 'still running')]);
    expect(code).toBe(0);
    expect(Date.now() - end).toBeLessThan(5_000);
  }, 30_000);
});
