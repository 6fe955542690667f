/**
 * A managed thread that forks a directive onto a remote: admitted like a local child (spawn,
 * budget) before anything reaches the server, its limits capped by what the thread has left.
 * A real HTTP stub on 127.0.0.1 records what reaches it; the model is the replay provider.
 */
import { createHash, sign } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { canonicalJson } from '@ryeos/executor';
import { generateKeyPair } from '@ryeos/lillux';
import { openThreadStore, threadsStateRoot } from '@ryeos/threads';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshotSigningText } from '../../src/index.js';
import { directive, useThreadFixture } from '../threads-helpers.js';

/**
 * Serves a key, takes every push and records every /execute body; answers it with a 500, or with
 * a signed run that reports `reportSpend` when that is set.
 */
class RecordingRemote {
  readonly key = generateKeyPair();
  readonly executes: Array<Record<string, unknown>> = [];
  reportSpend: number | undefined;
  parentResult: unknown;
  private readonly objects = new Map<string, string>();
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
      if (request.url === '/objects/get')
        return response.end(JSON.stringify({ entries: body.hashes.map((hash: string) => this.entry(hash)) }));
      if (request.url === '/execute') this.executes.push(body);
      if (request.url === '/execute' && this.reportSpend !== undefined)
        return response.end(JSON.stringify(this.signedRun(body)));
      response.statusCode = 500;
      response.end(JSON.stringify({ status: 'error', error: 'stub', error_type: 'internal' }));
    });
  });
  private put(object: Record<string, unknown>): string {
    const text = canonicalJson(object);
    const hash = createHash('sha256').update(text).digest('hex');
    this.objects.set(hash, text);
    return hash;
  }

  private entry(hash: string) {
    return { hash, kind: 'object', data: Buffer.from(this.objects.get(hash) ?? '').toString('base64') };
  }

  private signedRun(body: Record<string, unknown>) {
    const result = {
      status: 'success',
      type: 'directive',
      result: 'done',
      cost: { spend: this.reportSpend },
    };
    const state = this.put({ schema: 1, kind: 'state_snapshot', state: { result } });
    const snapshot = this.put({
      schema: 1,
      kind: 'execution_snapshot',
      graph_run_id: 'rye-remote-00000000000a',
      request_hash: createHash('sha256').update(canonicalJson(body)).digest('hex'),
      state_hash: state,
      node_receipts: [],
    });
    const signature = sign(null, Buffer.from(snapshotSigningText(snapshot)), this.key.privateKeyPem);
    return {
      status: 'success',
      thread_id: 'rye-remote-00000000000a',
      execution_snapshot_hash: snapshot,
      execution_snapshot_signature: signature.toString('base64'),
      new_object_hashes: [],
      result: {},
      system_version: body.system_version,
    };
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function parentWith(limits: string, kidLimits = 'turns="50" spend="5"') {
  return useThreadFixture(async (fx) => {
    await fx.write(
      '.ai/directives/acme/boss.md',
      directive('boss', {
        metadata: `    <model tier="fast" provider="anthropic"/>\n    <limits turns="4" ${limits}/>\n    <permissions><execute><directive>acme.kid</directive><tool>rye.file-system.read</tool></execute></permissions>`,
      }),
    );
    await fx.sign('directive:acme/boss');
    await fx.write(
      '.ai/directives/acme/kid.md',
      directive('kid', { metadata: `    <limits ${kidLimits}/>` }),
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
  options: {
    async?: boolean;
    reportSpend?: number;
    overrides?: Record<string, unknown>;
    /** Input tokens the parent's first turn reports (what it has spent before it forks). */
    inputTokens?: number;
  } = {},
): Promise<RecordingRemote> {
  const remote = new RecordingRemote();
  remote.reportSpend = options.reportSpend;
  remotes.push(remote);
  const url = await remote.listen();
  fx.env.RYE_REMOTE_API_KEY = `rye_sk_${'k'.repeat(43)}`;
  mkdirSync(join(fx.user, '.ai/config/remotes'), { recursive: true });
  writeFileSync(join(fx.user, '.ai/config/remotes/remotes.yaml'), `remotes:\n  default:\n    url: ${url}\n`);
  fx.refresh();
  expect((await fx.rye.remote('trust', { remote: 'default' })).pinned).toBe(true);
  await fx.serve({
    turns: [
      // The parent's own spend before it forks: a turn of its own whose cost is booked first.
      ...(options.inputTokens
        ? [
            {
              usage: { input_tokens: options.inputTokens, output_tokens: 0 },
              tool_calls: [{ id: 'toolu_0', name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
            },
          ]
        : []),
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
              limit_overrides: options.overrides ?? { spend: 100, turns: 500 },
            },
          },
        ],
      },
      { text: 'done' },
    ],
  } as never);
  remote.parentResult = await fx.rye.execute({ item_id: 'directive:acme/boss', thread: 'fork' } as never);
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

  // As threads-orchestration's local case: $0.003 of the parent's $0.011 spent, the kid needs $0.01.
  for (const async of [false, true]) {
    const tight = parentWith('spend="0.011"', 'turns="50" spend="0.01"');
    it(`${async ? 'async, ' : ''}a kid that needs more than the thread has left: refused like a local child (LIMIT), nothing reaches the server`, async () => {
      const fx = tight();
      const remote = await forkRemotely(fx, { async, inputTokens: 3000, overrides: { turns: 5 } });
      const seen = JSON.stringify(fx.server?.requests.at(-1) ?? {});
      expect(remote.executes).toEqual([]);
      expect(seen).toMatch(
        /Budget reservation failed: parent \S+ has \$0\.0080 left, the child needs \$0\.0100/,
      );
      expect(seen).toContain('\\"error_type\\":\\"limit\\"');
    });
  }

  const fits = parentWith('spend="0.5"', 'turns="50" spend="0.2"');
  it('a kid whose spend fits what the thread has left is sent exactly that spend', async () => {
    const fx = fits();
    const remote = await forkRemotely(fx, { inputTokens: 3000, overrides: { turns: 5 } });
    expect(remote.executes).toHaveLength(1);
    expect((remote.executes[0]!.limit_overrides as { spend?: number }).spend).toBe(0.2);
  });

  const paying = parentWith('spend="0.5"');
  it('the spend the server reports is charged to the thread', async () => {
    const fx = paying();
    const remote = await forkRemotely(fx, { reportSpend: 0.25 });
    expect(remote.executes).toHaveLength(1);
    const parentId = (remote.parentResult as { thread_id: string }).thread_id;
    const store = openThreadStore(threadsStateRoot(fx.project));
    try {
      const parent = await store.ledger.get(parentId);
      const own = (remote.parentResult as { cost: { spend: number } }).cost.spend;
      expect(parent?.actual_spend).toBeCloseTo(own + 0.25, 6);
    } finally {
      await store.close();
    }
  });
});
