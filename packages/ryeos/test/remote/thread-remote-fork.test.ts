/**
 * A managed thread that forks a directive onto a remote: admitted like a local child (spawn,
 * budget) before anything reaches the server, its limits capped by what the thread has left.
 * A real HTTP stub on 127.0.0.1 records what reaches it; the model is the replay provider.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { generateKeyPair } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from '../threads-helpers.js';

/** Serves a key, takes every push, records every /execute body and answers it with a 500. */
class RecordingRemote {
  readonly key = generateKeyPair();
  readonly executes: Array<Record<string, unknown>> = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/public-key') {
        response.end(JSON.stringify({ public_key_pem: this.key.publicKeyPem }));
        return;
      }
      const raw = Buffer.concat(chunks);
      const bytes = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const body = bytes.length ? JSON.parse(bytes.toString()) : {};
      if (request.url === '/objects/has')
        return response.end(JSON.stringify({ present: [], missing: body.hashes }));
      if (request.url === '/objects/put')
        return response.end(
          JSON.stringify({ stored: body.entries.map((entry: { hash: string }) => entry.hash) }),
        );
      if (request.url === '/push')
        return response.end(JSON.stringify({ status: 'ok', remote_name: 'default' }));
      if (request.url === '/execute') this.executes.push(body);
      response.statusCode = 500;
      response.end(JSON.stringify({ status: 'error', error: 'stub', error_type: 'internal' }));
    });
  });
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function parentWith(limits: string) {
  return useThreadFixture(async (fx) => {
    await fx.write(
      '.ai/directives/acme/boss.md',
      directive('boss', {
        metadata: `    <limits turns="4" ${limits}/>\n    <permissions><execute><directive>acme.kid</directive></execute></permissions>`,
      }),
    );
    await fx.sign('directive:acme/boss');
    await fx.write(
      '.ai/directives/acme/kid.md',
      directive('kid', { metadata: '    <limits turns="50" spend="5"/>' }),
    );
    await fx.sign('directive:acme/kid');
  });
}

const remotes: RecordingRemote[] = [];
afterEach(async () => {
  for (const remote of remotes.splice(0)) await remote.close();
});

async function forkRemotely(
  fx: ReturnType<ReturnType<typeof parentWith>>,
  options: { async?: boolean } = {},
): Promise<RecordingRemote> {
  const remote = new RecordingRemote();
  remotes.push(remote);
  const url = await remote.listen();
  fx.env.RYE_REMOTE_API_KEY = `rye_sk_${'k'.repeat(43)}`;
  mkdirSync(join(fx.user, '.ai/config/remotes'), { recursive: true });
  writeFileSync(join(fx.user, '.ai/config/remotes/remotes.yaml'), `remotes:\n  default:\n    url: ${url}\n`);
  fx.refresh();
  expect((await fx.rye.remote('trust', { remote: 'default' })).pinned).toBe(true);
  await fx.serve({
    turns: [
      {
        tool_calls: [
          {
            id: 'toolu_1',
            name: 'rye_execute',
            input: {
              item_id: 'directive:acme/kid',
              thread: 'fork',
              target: 'remote',
              ...(options.async ? { async: true } : {}),
              limit_overrides: { spend: 100, turns: 500 },
            },
          },
        ],
      },
      { text: 'done' },
    ],
  } as never);
  await fx.rye.execute({ item_id: 'directive:acme/boss', thread: 'fork' } as never);
  return remote;
}

describe('a thread forks a directive onto a remote', () => {
  const noSpawns = parentWith('spend="0.5" spawns="0"');
  it('with no spawn left: refused like a local child, nothing reaches the server', async () => {
    const fx = noSpawns();
    const remote = await forkRemotely(fx);
    expect(remote.executes).toEqual([]);
    const seen = JSON.stringify(fx.server?.requests.at(-1) ?? {});
    expect(seen).toMatch(/Spawn limit exceeded/);
  });

  const smallBudget = parentWith('spend="0.01"');
  it('asking for spend 100: the server is sent at most what the thread has left', async () => {
    const fx = smallBudget();
    const remote = await forkRemotely(fx);
    expect(remote.executes).toHaveLength(1);
    const overrides = remote.executes[0]?.limit_overrides as { spend?: number; turns?: number };
    expect(overrides.spend).toBeGreaterThan(0);
    expect(overrides.spend).toBeLessThanOrEqual(0.01);
  });

  const asyncBudget = parentWith('spend="0.01"');
  it('async, asking for spend 100: the detached run is launched with at most what the thread had left', async () => {
    const fx = asyncBudget();
    await forkRemotely(fx, { async: true });
    const threads = join(fx.project, '.ai', 'state', 'threads');
    const launched = readdirSync(threads, { recursive: true })
      .map(String)
      .filter((path) => path.endsWith('spawn_params.json'))
      .map((path) => JSON.parse(readFileSync(join(threads, path), 'utf8')))
      .filter((request) => request.remote?.item_id === 'directive:acme/kid');
    expect(launched).toHaveLength(1);
    const spend = launched[0].remote.limit_overrides.spend;
    expect(spend).toBeGreaterThan(0);
    expect(spend).toBeLessThanOrEqual(0.01);
  });
});
