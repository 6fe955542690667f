/**
 * Signed answers (protocol 2): the host gives a new worker process a key as the first line on its
 * fd 3 and accepts only the lines signed with it, so a line another process wrote onto the
 * worker's fd 3 (a copy taken with pidfd_getfd) cannot pass for an answer.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../src/subprocess.js';

/**
 * Input `forge-first`: writes an unsigned and a wrongly signed answer before its own. Input
 * `injected-first`: first answers, correctly keyed, a request the host never sent for the same id
 * (what a worker does with a request another process wrote on the host's end of the channel).
 */
const WORKER = `
import { createHash, createHmac } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Socket } from 'node:net';
const channel = new Socket({ fd: 3, readable: true, writable: true });
let key;
const line = (message) => JSON.stringify(message);
const digest = (text) => createHash('sha256').update(text).digest('base64url');
const sign = (request, json) =>
  createHmac('sha256', key).update(digest(request) + '\\n' + json).digest('base64url') + ' ' + json + '\\n';
createInterface({ input: channel }).on('line', (text) => {
  if (key === undefined) {
    key = Buffer.from(JSON.parse(text).key, 'base64');
    return;
  }
  const request = JSON.parse(text);
  const answer = (stdout) => ({ id: request.id, stdout, stderr: '', exit_code: 0 });
  if (request.input === 'forge-first') {
    channel.write(line(answer('"forged, unsigned"')) + '\\n');
    channel.write('A'.repeat(43) + ' ' + line(answer('"forged, bad signature"')) + '\\n');
  }
  if (request.input === 'injected-first') {
    const injected = line({ ...request, input: 'chosen by another process' });
    channel.write(sign(injected, line(answer('"answer to an injected request"'))));
  }
  channel.write(sign(text, line(answer(JSON.stringify({ protocol: process.env.RYE_WORKER_PROTOCOL, keyBytes: key.length })))));
}).on('close', () => process.exit(0));
`;

let dir: string;
let script: string;
const pools: WorkerPool[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lillux-signed-'));
  script = join(dir, 'worker.mjs');
  await writeFile(script, WORKER);
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function call(input: string) {
  const pool = new WorkerPool();
  pools.push(pool);
  return pool.run({
    command: process.execPath,
    args: [script],
    env: { PATH: process.env.PATH ?? '' },
    input,
    timeoutMs: 10_000,
    worker: { signedAnswers: true },
  });
}

describe('signed answers', () => {
  it('gives the worker a 32-byte key first, and takes its signed answer', async () => {
    const result = await call('honest');
    expect(result).toMatchObject({ success: true });
    expect(JSON.parse(result.stdout)).toEqual({ protocol: '2', keyBytes: 32 });
  });

  it('drops lines on the channel that the worker did not sign', async () => {
    const result = await call('forge-first');
    expect(result.stdout).not.toContain('forged');
    expect(JSON.parse(result.stdout)).toEqual({ protocol: '2', keyBytes: 32 });
  });

  it('drops an answer signed over a request the host did not send', async () => {
    const result = await call('injected-first');
    expect(result.stdout).not.toContain('injected');
    expect(JSON.parse(result.stdout)).toEqual({ protocol: '2', keyBytes: 32 });
  });
});
