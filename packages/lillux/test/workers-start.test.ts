/**
 * `WorkerPool.start`: a worker started ahead of its first call, for a host that knows which
 * workers it will need. The call then runs on that very process; a second start is a no-op; an
 * unused worker still retires when idle, and a bad command is a VALIDATION error.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RyeError, type WarmCallOptions, WorkerPool } from '../src/index.js';

/** Answers each call with its pid and when its process started. */
const WORKER = `
import { createInterface } from 'node:readline';
import { Socket } from 'node:net';
const channel = new Socket({ fd: 3, readable: true, writable: true });
const lines = createInterface({ input: channel });
lines.on('line', (line) => {
  const { id } = JSON.parse(line);
  const stdout = JSON.stringify({ pid: process.pid, startedAt: Math.round(performance.timeOrigin) });
  channel.write(JSON.stringify({ id, stdout, stderr: '', exit_code: 0 }) + '\\n');
});
lines.on('close', () => process.exit(0));
`;

let dir: string;
let script: string;
const pools: WorkerPool[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lillux-start-'));
  script = join(dir, 'worker.mjs');
  await writeFile(script, WORKER);
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function options(extra: Partial<WarmCallOptions> = {}): WarmCallOptions {
  return { command: process.execPath, args: [script], env: { PATH: process.env.PATH ?? '' }, ...extra };
}

function pool(): WorkerPool {
  const made = new WorkerPool();
  pools.push(made);
  return made;
}

describe('WorkerPool.start', () => {
  it('starts the worker a call will use, before the call, once', async () => {
    const p = pool();
    expect(p.start(options({ worker: { idleMs: 10_000 } }))).toBe(true);
    expect(p.size).toBe(1);
    expect(p.start(options({ worker: { idleMs: 10_000 } }))).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const calledAt = Date.now();
    const result = await p.run(options({ input: '{}', timeoutMs: 10_000, worker: { idleMs: 10_000 } }));
    const answer = JSON.parse(result.stdout) as { pid: number; startedAt: number };
    expect(answer.startedAt).toBeLessThan(calledAt);
    expect(p.size).toBe(1);
  });

  it('a started worker nobody calls retires when idle', async () => {
    const p = pool();
    expect(p.start(options({ worker: { idleMs: 50 } }))).toBe(true);
    const until = Date.now() + 10_000;
    while (p.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(p.size).toBe(0);
  });

  it('refuses an empty command with a VALIDATION error', () => {
    expect(() => pool().start(options({ command: '' }))).toThrow(RyeError);
    expect(() => pool().start(options({ command: '' }))).toThrow(
      /startWarm: command must be a non-empty string/,
    );
  });
});
