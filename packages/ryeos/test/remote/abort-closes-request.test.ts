/**
 * Stopping a synchronous remote run closes its HTTP request, so the server (which stops a run
 * whose request closed) does not go on. A real HTTP stub on 127.0.0.1 holds `/execute` open and
 * records when the client's side of it closes.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { generateKeyPair } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { createRye } from '../../src/index.js';

/** Takes a push, then holds every /execute open until the client goes away. */
class HangingServer {
  readonly key = generateKeyPair();
  executeArrived!: () => void;
  readonly arrived = new Promise<void>((resolve) => {
    this.executeArrived = resolve;
  });
  requestClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => {
    this.requestClosed = resolve;
  });
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString();
      const body = text ? JSON.parse(text) : {};
      response.setHeader('content-type', 'application/json');
      if (request.url === '/execute') {
        response.on('close', () => this.requestClosed());
        this.executeArrived();
        return;
      }
      const answers: Record<string, unknown> = {
        '/public-key': { public_key_pem: this.key.publicKeyPem },
        '/objects/has': { present: [], missing: body.hashes },
        '/objects/put': { stored: (body.entries ?? []).map((entry: { hash: string }) => entry.hash) },
        '/push': { status: 'ok', remote_name: 'default' },
      };
      response.end(JSON.stringify(answers[request.url ?? ''] ?? {}));
    });
  });
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const servers: HangingServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

describe('stopping a remote run', () => {
  it('aborting a synchronous run closes its /execute request', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rye-remote-abort-'));
    await mkdir(join(root, 'app', '.ai'), { recursive: true });
    await mkdir(join(root, 'user', '.ai'), { recursive: true });
    const server = new HangingServer();
    servers.push(server);
    const rye = createRye({
      projectPath: join(root, 'app'),
      userSpace: join(root, 'user'),
      env: { PATH: process.env.PATH, RYE_REMOTE_API_KEY: `rye_sk_${'a'.repeat(43)}` },
    });
    await rye.addRemote('default', await server.start());
    await rye.remote('trust');
    const stop = new AbortController();
    const run = rye.execute({
      item_id: 'tool:rye/bash',
      parameters: { command: 'true' },
      target: 'remote',
      signal: stop.signal,
    } as never);
    await server.arrived;
    stop.abort();
    await server.closed;
    expect(await run).toMatchObject({ status: 'error' });
  });
});
