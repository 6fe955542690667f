/**
 * A signed execute answer names the request it answers (`request_hash` in the execution
 * snapshot): an answer signed by the pinned key but made for another request (replayed by a man
 * in the middle) is refused. A real HTTP stub on 127.0.0.1 plays a server holding the pinned key.
 */
import { createHash, sign } from 'node:crypto';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { canonicalJson } from '@ryeos/executor';
import { generateKeyPair } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { createRye, snapshotSigningText } from '../../src/index.js';

const KEY = `rye_sk_${'a'.repeat(43)}`;
const sha256 = (bytes: string) => createHash('sha256').update(bytes).digest('hex');

/** Answers every /execute with a snapshot signed by its key, naming `answersFor(body)` as the request. */
class SigningServer {
  readonly key = generateKeyPair();
  readonly objects = new Map<string, string>();
  answersFor: (body: unknown) => unknown = (body) => body;
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString();
      const body = text ? JSON.parse(text) : {};
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(this.answer(request.url ?? '', body)));
    });
  });

  private put(object: Record<string, unknown>): string {
    const text = canonicalJson(object);
    this.objects.set(sha256(text), text);
    return sha256(text);
  }

  private answer(url: string, body: Record<string, unknown>): unknown {
    if (url === '/public-key') return { public_key_pem: this.key.publicKeyPem };
    if (url === '/objects/has') return { present: [], missing: body.hashes };
    if (url === '/objects/put')
      return { stored: (body.entries as Array<{ hash: string }>).map((e) => e.hash) };
    if (url === '/push') return { status: 'ok', remote_name: 'default' };
    if (url === '/objects/get') {
      return {
        entries: (body.hashes as string[]).map((hash) => ({
          hash,
          kind: 'object',
          data: Buffer.from(this.objects.get(hash) ?? '').toString('base64'),
        })),
      };
    }
    if (url === '/execute') {
      const state = this.put({
        schema: 1,
        kind: 'state_snapshot',
        state: { result: { status: 'success', data: 'ok' } },
      });
      const snapshot = this.put({
        schema: 1,
        kind: 'execution_snapshot',
        graph_run_id: 'rye-remote-000000000001',
        request_hash: sha256(canonicalJson(this.answersFor(body))),
        state_hash: state,
        node_receipts: [],
      });
      const signature = sign(null, Buffer.from(snapshotSigningText(snapshot)), this.key.privateKeyPem);
      return {
        status: 'success',
        thread_id: 'rye-remote-000000000001',
        execution_snapshot_hash: snapshot,
        execution_snapshot_signature: signature.toString('base64'),
        new_object_hashes: [],
        result: {},
        system_version: body.system_version,
      };
    }
    return { status: 'error', error: 'unexpected', error_type: 'internal' };
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const servers: SigningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function remoteRye() {
  const root = await mkdtemp(join(tmpdir(), 'rye-remote-replay-'));
  await mkdir(join(root, 'app', '.ai'), { recursive: true });
  await mkdir(join(root, 'user', '.ai'), { recursive: true });
  const server = new SigningServer();
  servers.push(server);
  const rye = createRye({
    projectPath: join(root, 'app'),
    userSpace: join(root, 'user'),
    env: { PATH: process.env.PATH, RYE_REMOTE_API_KEY: KEY },
  });
  await rye.addRemote('default', await server.start());
  await rye.remote('trust');
  return { rye, server };
}

const run = { item_type: 'tool', item_id: 'rye/bash', parameters: { command: 'true' } };

describe('a signed answer names the request it answers', () => {
  it('the answer to this request is taken', async () => {
    const { rye } = await remoteRye();
    expect(await rye.remote('execute', run)).toMatchObject({ status: 'success', result: { data: 'ok' } });
  });

  it('an answer signed for another request (a replay) is refused, nothing of it is taken', async () => {
    const { rye, server } = await remoteRye();
    server.answersFor = (body) => ({ ...(body as object), parameters: { command: 'rm -rf ~' } });
    await expect(rye.remote('execute', run)).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringContaining('not the one just sent'),
    });
  });
});
