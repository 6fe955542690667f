/**
 * A directive run remotely as a forked thread, against the scripted provider on 127.0.0.1: the
 * provider's address and key reach the run only as the user's secrets on the server, and the
 * thread's signed records come back as objects that verify with the server's public key.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ObjectStore } from '@ryeos/executor';
import { fingerprint, generateKeyPair } from '@ryeos/lillux';
import { readThreadJson, verifyThreadJson, verifyTranscript } from '@ryeos/threads';
import { type ReplayServer, startReplayServer } from '@ryeos/threads/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  call,
  clientSide,
  type RemoteServer,
  removeAll,
  SUMMARIZE,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

let server: RemoteServer;
let provider: ReplayServer;
let client: ClientSide;
let key: string;
let publicKeyPem: string;

beforeAll(async () => {
  server = await startServer();
  key = await server.key('alice');
  publicKeyPem = (await call(server, '/public-key')).json.public_key_pem;
  provider = await startReplayServer({
    turns: [
      { tool_calls: [{ id: 'toolu_1', name: 'rye_file_system_read', input: { path: 'notes.txt' } }] },
      {
        tool_calls: [
          { id: 'toolu_2', name: 'rye_directive_return', input: { summary: 'Three greek letters.' } },
        ],
      },
    ],
  });
  for (const [name, value] of [
    ['ANTHROPIC_BASE_URL', provider.url],
    ['ANTHROPIC_API_KEY', 'replay-key'],
  ] as const) {
    expect((await server.cli(['secrets', 'set', '--user', 'alice', name], value)).code).toBe(0);
  }
  client = await clientSide();
  await client.write('.ai/directives/acme/summarize.md', SUMMARIZE);
  await client.write('notes.txt', 'alpha\nbeta\ngamma\n');
  await client.sign('directive:acme/summarize');
});

afterAll(async () => {
  await provider.close();
  await server.stop();
  await removeAll(server.dataDir, client.root);
});

/** Trust that knows one key only, as a client that pinned this server has it. */
const onlyKey = (pem: string) => (fp: string) =>
  fp === fingerprint(`${pem.trim()}\n`) ? { publicKeyPem: pem } : undefined;

describe('a forked directive run remotely', () => {
  it('runs against the scripted provider and returns records that verify with the server key', async () => {
    const pushed = await client.push(server, key, { include: ['.ai/', 'notes.txt'], exclude: [] });
    const answer = await call(server, '/execute', {
      key,
      body: {
        project_manifest_hash: pushed.project,
        user_manifest_hash: pushed.user,
        system_version: SYSTEM_VERSION,
        item_type: 'directive',
        item_id: 'acme/summarize',
        thread: 'fork',
        parameters: { path: 'notes.txt' },
      },
    });
    expect(answer.json.status, JSON.stringify(answer.json, null, 2)).toBe('success');
    expect(answer.json.result).toMatchObject({
      status: 'success',
      outputs: { summary: 'Three greek letters.' },
    });
    // The file-system tool really ran on the server: its output went back to the model.
    expect(provider.requests).toHaveLength(2);
    expect(JSON.stringify(provider.requests[1]!.body)).toContain('beta');
    expect(provider.requests[0]!.headers['x-api-key']).toBe('replay-key');

    // Pull everything the run produced into a client store, each object checked against its hash.
    const pulled = new ObjectStore(join(client.root, 'pulled'));
    const got = await call(server, '/objects/get', { key, body: { hashes: answer.json.new_object_hashes } });
    for (const entry of got.json.entries)
      pulled.putEntry(entry.hash, entry.kind, Buffer.from(entry.data, 'base64'));
    const snapshot = pulled.getObject<{ artifact_index_hash: string; graph_run_id: string }>(
      answer.json.execution_snapshot_hash,
    )!;
    const index = pulled.getObject<{ thread_id: string; entries: Record<string, string> }>(
      snapshot.artifact_index_hash,
    )!;
    const threadId = String(answer.json.result.thread_id);
    expect(index.thread_id).toBe(answer.json.thread_id);
    expect(Object.keys(index.entries).sort()).toEqual(
      expect.arrayContaining([
        `.ai/state/threads/${threadId}/thread.json`,
        `.ai/state/threads/${threadId}/transcript.jsonl`,
        `.ai/knowledge/agent/threads/${threadId}.md`,
      ]),
    );

    // Written out as a thread folder, the records verify with the server's key alone...
    const records = join(client.root, 'records');
    for (const [path, hash] of Object.entries(index.entries)) {
      mkdirSync(dirname(join(records, path)), { recursive: true });
      writeFileSync(join(records, path), pulled.getBlob(hash)!);
    }
    const dir = join(records, '.ai/state/threads', threadId);
    const serverTrust = onlyKey(publicKeyPem);
    const threadJson = await readThreadJson(dir, serverTrust);
    expect(threadJson.data).toMatchObject({ thread_id: threadId, status: 'completed' });
    expect(verifyThreadJson(threadJson.data as unknown as Record<string, unknown>, serverTrust).valid).toBe(
      true,
    );
    expect((await verifyTranscript(join(dir, 'transcript.jsonl'), serverTrust)).valid).toBe(true);
    // ...and not with any other key.
    const otherTrust = onlyKey(generateKeyPair().publicKeyPem);
    expect(verifyThreadJson(threadJson.data as unknown as Record<string, unknown>, otherTrust).valid).toBe(
      false,
    );
    expect((await verifyTranscript(join(dir, 'transcript.jsonl'), otherTrust)).valid).toBe(false);

    const row = await call(server, `/threads/${answer.json.thread_id}`, { key });
    expect(row.json).toMatchObject({
      item_type: 'directive',
      item_id: 'acme/summarize',
      status: 'completed',
    });
  }, 60_000);
});
