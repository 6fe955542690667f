/**
 * What one API-key holder can take from the others: request bytes held in memory, connections,
 * time to send a body, and run slots. Each is bounded, and the bound answers with its documented
 * refusal while the others still get served.
 */
import { type ClientRequest, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  type ClientSide,
  call,
  clientSide,
  type RemoteServer,
  removeAll,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A chunked POST that sends `bytes` and never ends. */
function heldBody(server: RemoteServer, key: string, bytes: number): ClientRequest {
  const req = request(`${server.url}/objects/put`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    },
  });
  req.on('error', () => {});
  req.write(`{"x":"${'a'.repeat(bytes - 6)}`);
  return req;
}

/** Held bodies, opened one after another, each written out before the next starts. */
async function heldBodies(server: RemoteServer, key: string, count: number, bytes: number) {
  const held: Array<{ req: ClientRequest; answered: () => number | undefined }> = [];
  for (let i = 0; i < count; i++) {
    const req = heldBody(server, key, bytes);
    let status: number | undefined;
    req.on('response', (res) => {
      status = res.statusCode;
    });
    await new Promise((resolve) => req.write('', resolve));
    held.push({ req, answered: () => status });
  }
  return held;
}

/** A complete POST of about `bytes`. */
function fullBody(server: RemoteServer, key: string, bytes: number): Promise<Answer> {
  return call(server, '/objects/has', { key, body: { hashes: [], pad: 'p'.repeat(bytes) } });
}

describe('ryeos-remote: request bytes held at once', () => {
  let server: RemoteServer;
  let key: string;
  const limit = 1024 * 1024;
  beforeAll(async () => {
    // The default budget: four bodies' worth.
    server = await startServer({ args: ['--max-request-bytes', String(limit)] });
    key = await server.key('alice');
  });
  afterAll(async () => {
    await server.stop();
    await removeAll(server.dataDir);
  });

  it('refuses a body past the budget with 503 and Retry-After while four are held, then serves again', async () => {
    const near = limit - 64 * 1024;
    const held = await heldBodies(server, key, 4, near);
    // Four near-limit bodies leave less than 300 KB of the 4 MiB budget; the probe needs 400 KB.
    await sleep(300);
    let answer = await fullBody(server, key, 400 * 1024);
    for (let attempt = 0; attempt < 20 && answer.status !== 503; attempt++) {
      await sleep(250);
      answer = await fullBody(server, key, 400 * 1024);
    }
    expect(held.map((body) => body.answered())).toEqual([undefined, undefined, undefined, undefined]);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.json).toMatchObject({ error_type: 'unavailable' });
    expect(answer.json.hint).toMatch(/--max-inflight-bytes/);
    for (const body of held) body.req.destroy();
    for (let attempt = 0; attempt < 40 && answer.status === 503; attempt++) {
      await sleep(250);
      answer = await fullBody(server, key, near);
    }
    expect(answer.status).toBe(200);
  });
});

describe('ryeos-remote: connections and body time', () => {
  let server: RemoteServer;
  let key: string;
  beforeAll(async () => {
    server = await startServer({
      args: ['--max-connections-per-client', '3', '--max-body-seconds', '2'],
    });
    key = await server.key('alice');
  });
  afterAll(async () => {
    await server.stop();
    await removeAll(server.dataDir);
  });

  it('answers a connection past the per-address cap with 503, and serves once one closes', async () => {
    const { port } = new URL(server.url);
    const open: Socket[] = [];
    for (let i = 0; i < 3; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('connect', resolve));
      open.push(socket);
    }
    const refused = await call(server, '/health');
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatch(/Too many open connections/);
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const socket of open) socket.destroy();
    let answer: Answer = refused;
    for (let attempt = 0; attempt < 40 && answer.status !== 200; attempt++) {
      await sleep(100);
      answer = await call(server, '/health');
    }
    expect(answer.status).toBe(200);
  });

  it('answers a body still unfinished after --max-body-seconds with 408 and closes it', async () => {
    const req = heldBody(server, key, 1000);
    const status = await new Promise<number | string>((resolve) => {
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('close', () => resolve('closed without an answer'));
      // Far past the deadline: node's own 300 s default would still be waiting.
      setTimeout(() => resolve('still open after 20 s'), 20_000).unref();
    });
    req.destroy();
    expect(status).toBe(408);
  }, 30_000);
});

describe('ryeos-remote: run slots per user', () => {
  let server: RemoteServer;
  let alice: string;
  let bob: string;
  let aliceSide: ClientSide;
  let bobSide: ClientSide;
  beforeAll(async () => {
    // Four slots (the default), so two per user; the hogs end when the server stops.
    server = await startServer({ args: ['--max-run-seconds', '60'] });
    alice = await server.key('alice');
    bob = await server.key('bob');
    aliceSide = await clientSide();
    bobSide = await clientSide();
  });
  afterAll(async () => {
    await server.stop();
    await removeAll(server.dataDir, aliceSide.root, bobSide.root);
  });

  const bash = (key: string, pushed: { project: string; user: string }, command: string) =>
    call(server, '/execute', {
      key,
      body: {
        project_manifest_hash: pushed.project,
        user_manifest_hash: pushed.user,
        system_version: SYSTEM_VERSION,
        item_type: 'tool',
        item_id: 'rye/bash',
        thread: 'inline',
        parameters: { command, timeout: 3600 },
      },
    });

  it("runs another user's execute while one user asks for every slot", async () => {
    const pushedA = await aliceSide.push(server, alice);
    const pushedB = await bobSide.push(server, bob);
    const settled: string[] = [];
    const hogs = [1, 2, 3, 4].map((n) =>
      bash(alice, pushedA, 'sleep 3600').then((answer) => {
        settled.push(`alice ${n}`);
        return answer;
      }),
    );
    await sleep(1500);
    const bobAnswer = await bash(bob, pushedB, 'echo bob');
    settled.push('bob');
    expect(bobAnswer.status, JSON.stringify(bobAnswer.json)).toBe(200);
    expect(bobAnswer.json.result.data.stdout).toBe('bob\n');
    // Bob was answered while all of Alice's runs were still held (before: only once they ended).
    expect(settled).toEqual(['bob']);
    const stopped = server.stop();
    await Promise.allSettled(hogs);
    await stopped;
    server = await startServer({ dataDir: server.dataDir });
  }, 90_000);
});
