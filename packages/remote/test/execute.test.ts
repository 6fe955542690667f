/**
 * `/execute` end to end: a real server process, a client's signed items pushed over HTTP, runs
 * in private temp spaces, results and records signed by the server's key.
 */
import { verify } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ObjectStore } from '@ryeos/executor';
import { createRye, snapshotSigningText } from 'ryeos';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  call,
  clientSide,
  nodeTool,
  type RemoteServer,
  removeAll,
  runsLeft,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const HELLO = nodeTool(
  'acme',
  'console.log(JSON.stringify({ success: true, greeting: `hi ${params.name}` }));',
);
const MARK = nodeTool(
  'acme',
  "import('node:fs').then(({ writeFileSync }) => { writeFileSync(params.marker, 'ran'); console.log(JSON.stringify({ success: true })); });",
);

let server: RemoteServer;
let alice: string;
let bob: string;
let publicKeyPem: string;
const clients: ClientSide[] = [];

beforeAll(async () => {
  server = await startServer({ env: { RYE_REMOTE_CANARY: 'server-process-only' } });
  alice = await server.key('alice');
  bob = await server.key('bob');
  publicKeyPem = (await call(server, '/public-key')).json.public_key_pem;
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await removeAll(server.dataDir);
});

afterEach(async () => {
  await removeAll(...clients.splice(0).map((c) => c.root));
});

async function newClient(): Promise<ClientSide> {
  const client = await clientSide();
  clients.push(client);
  return client;
}

async function executeRemote(
  key: string,
  pushed: { project: string; user: string },
  body: Record<string, unknown>,
) {
  return call(server, '/execute', {
    key,
    body: {
      project_manifest_hash: pushed.project,
      user_manifest_hash: pushed.user,
      system_version: SYSTEM_VERSION,
      parameters: {},
      ...body,
    },
  });
}

/** Fields that say how long a run took: the only ones a remote and a local run may differ in. */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !/(duration|elapsed|_ms$|^ms$|timing)/i.test(key))
      .map(([key, inner]) => [key, withoutTimings(inner)]),
  );
}

function verifiesWithServerKey(hash: string, signature: string): boolean {
  return verify(null, Buffer.from(snapshotSigningText(hash)), publicKeyPem, Buffer.from(signature, 'base64'));
}

/** Pulls objects into a fresh client store, each verified against its hash on the way in. */
async function pull(key: string, hashes: string[], into: ObjectStore) {
  const got = await call(server, '/objects/get', { key, body: { hashes } });
  expect(got.status).toBe(200);
  for (const entry of got.json.entries)
    into.putEntry(entry.hash, entry.kind, Buffer.from(entry.data, 'base64'));
  return got.json.entries.length as number;
}

const runFoldersLeft = () => runsLeft(server.dataDir);

describe('remote execute of a tool', () => {
  it('returns the same result as a local run, under a snapshot the server key signs', async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/hello.js', HELLO);
    await client.sign('tool:acme/hello');
    const local = await client.rye.execute({ item_id: 'tool:acme/hello', parameters: { name: 'ada' } });
    expect(local.status).toBe('success');
    const pushed = await client.push(server, alice);
    const answer = await executeRemote(alice, pushed, {
      item_type: 'tool',
      item_id: 'acme/hello',
      thread: 'inline',
      parameters: { name: 'ada' },
    });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    expect(answer.json).toMatchObject({ status: 'success', system_version: SYSTEM_VERSION });
    expect(answer.json.thread_id).toMatch(/^rye-remote-[0-9a-f]{12}$/);
    expect(withoutTimings(answer.json.result)).toEqual(withoutTimings(local));
    const hash = answer.json.execution_snapshot_hash;
    expect(verifiesWithServerKey(hash, answer.json.execution_snapshot_signature)).toBe(true);
    expect(
      verifiesWithServerKey(
        hash.replace(/^./, (c: string) => (c === 'a' ? 'b' : 'a')),
        answer.json.execution_snapshot_signature,
      ),
    ).toBe(false);
    // The snapshot names the result: pulled and checked against its hash, it reads back the same.
    const mine = new ObjectStore(join(client.root, 'pulled'));
    expect(await pull(alice, answer.json.new_object_hashes, mine)).toBe(answer.json.new_object_hashes.length);
    const snapshot = mine.getObject<Record<string, unknown>>(hash)!;
    expect(snapshot).toMatchObject({
      kind: 'execution_snapshot',
      graph_run_id: answer.json.thread_id,
      graph_id: 'acme/hello',
      project_manifest_hash: pushed.project,
      user_manifest_hash: pushed.user,
      status: 'completed',
      step: 1,
    });
    expect(mine.getObject<{ state: unknown }>(snapshot.state_hash as string)!.state).toEqual({
      result: answer.json.result,
    });
    // Its row: completed, the caller's only.
    const row = await call(server, `/threads/${answer.json.thread_id}`, { key: alice });
    expect(row.json).toMatchObject({ status: 'completed', item_type: 'tool', execution_snapshot_hash: hash });
    expect((await call(server, `/threads/${answer.json.thread_id}`, { key: bob })).status).toBe(404);
    const bobs = await call(server, '/threads', { key: bob });
    expect(bobs.json.threads.map((t: { thread_id: string }) => t.thread_id)).not.toContain(
      answer.json.thread_id,
    );
    expect(await runFoldersLeft()).toEqual([]);
  });

  it('runs a project pushed by name', async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/hello.js', HELLO);
    await client.sign('tool:acme/hello');
    const pushed = await client.push(server, alice);
    const push = await call(server, '/push', {
      key: alice,
      body: {
        project_name: 'greeter',
        project_manifest_hash: pushed.project,
        user_manifest_hash: pushed.user,
        system_version: SYSTEM_VERSION,
      },
    });
    expect(push.json).toEqual({
      status: 'ok',
      remote_name: 'default',
      project_name: 'greeter',
      project_manifest_hash: pushed.project,
      user_manifest_hash: pushed.user,
    });
    const answer = await call(server, '/execute', {
      key: alice,
      body: {
        project_name: 'greeter',
        system_version: SYSTEM_VERSION,
        item_type: 'tool',
        item_id: 'acme/hello',
        thread: 'inline',
        parameters: { name: 'bo' },
      },
    });
    expect(answer.json.result).toMatchObject({ status: 'success' });
    expect(JSON.stringify(answer.json.result)).toContain('hi bo');
    // Bob cannot run alice's project by its name.
    const asBob = await call(server, '/execute', {
      key: bob,
      body: {
        project_name: 'greeter',
        system_version: SYSTEM_VERSION,
        item_type: 'tool',
        item_id: 'acme/hello',
        thread: 'inline',
        parameters: {},
      },
    });
    expect(asBob.status).toBe(404);
  });
});

describe("remote execute keeps the system space the server's", () => {
  it('ignores a pushed bundles.yaml (it could name any folder of the server as a bundle)', async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/hello.js', HELLO);
    await client.sign('tool:acme/hello');
    await client.write(
      '.ai/config/bundles.yaml',
      `bundles:\n  - {id: server-files, path: ${server.dataDir}}\n  - [not: valid`,
      'user',
    );
    const answer = await executeRemote(alice, await client.push(server, alice), {
      item_type: 'tool',
      item_id: 'acme/hello',
      thread: 'inline',
      parameters: { name: 'cy' },
    });
    expect(answer.json.result, JSON.stringify(answer.json)).toMatchObject({
      status: 'success',
      data: { greeting: 'hi cy' },
    });
  });
});

describe('remote execute with the server pinned by the client', () => {
  it("runs: the pin (the server's key in the pushed trust store) is not a signature", async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/hello.js', HELLO);
    await client.sign('tool:acme/hello');
    // As the client pins a server on first contact: its key in the user trust store.
    await client.rye.trustKey(publicKeyPem, { owner: 'remote:default:127.0.0.1' });
    const answer = await executeRemote(alice, await client.push(server, alice), {
      item_type: 'tool',
      item_id: 'acme/hello',
      thread: 'inline',
      parameters: { name: 'pin' },
    });
    expect(answer.json.result, JSON.stringify(answer.json)).toMatchObject({
      status: 'success',
      data: { greeting: 'hi pin' },
    });
  });
});

describe('remote execute never runs an unverified byte', () => {
  it('an unsigned tool pushed to the server returns the integrity error and never runs', async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/mark.js', MARK);
    const marker = join(client.root, 'unsigned-ran');
    const answer = await executeRemote(alice, await client.push(server, alice), {
      item_type: 'tool',
      item_id: 'acme/mark',
      thread: 'inline',
      parameters: { marker },
    });
    expect(answer.status).toBe(200);
    expect(answer.json.status).toBe('error');
    expect(answer.json.result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(existsSync(marker)).toBe(false);
    expect(
      verifiesWithServerKey(answer.json.execution_snapshot_hash, answer.json.execution_snapshot_signature),
    ).toBe(true);
    const row = await call(server, `/threads/${answer.json.thread_id}`, { key: alice });
    expect(row.json.status).toBe('error');
  });

  it('a tool changed after it was signed is refused there too', async () => {
    const client = await newClient();
    const path = await client.write('.ai/tools/acme/mark.js', MARK);
    await client.sign('tool:acme/mark');
    writeFileSync(path, readFileSync(path, 'utf8').replace("'ran'", "'tampered'"));
    const marker = join(client.root, 'tampered-ran');
    const answer = await executeRemote(alice, await client.push(server, alice), {
      item_type: 'tool',
      item_id: 'acme/mark',
      thread: 'inline',
      parameters: { marker },
    });
    expect(answer.json.result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(existsSync(marker)).toBe(false);
  });

  it("an item signed with the server's own key is refused (it is trusted inside every run)", async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/mark.js', MARK);
    // As if the server had signed it in some run: sign it with the server's key.
    const asServer = createRye({
      projectPath: client.project,
      env: { ...client.env, RYE_SIGNING_KEY_DIR: join(server.dataDir, 'signing') },
    });
    expect((await asServer.sign('tool:acme/mark')).status).not.toBe('error');
    const marker = join(client.root, 'server-signed-ran');
    const answer = await executeRemote(bob, await client.push(server, bob), {
      item_type: 'tool',
      item_id: 'acme/mark',
      thread: 'inline',
      parameters: { marker },
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error_type: 'permission' });
    expect(answer.json.error).toMatch(/signed with this server's own key/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a signed item altered in the server store is refused before it is written out', async () => {
    const client = await newClient();
    await client.write('.ai/tools/acme/mark.js', MARK);
    await client.sign('tool:acme/mark');
    const pushed = await client.push(server, alice);
    const marker = join(client.root, 'store-tampered-ran');
    // The tool's text is a blob the manifest names (the client's store has the same hashes);
    // change that blob's file in alice's store on the server.
    const manifest = client.store.getObject<{ items: Record<string, string> }>(pushed.project)!;
    const source = client.store.getObject<{ content_blob_hash: string }>(
      manifest.items['.ai/tools/acme/mark.js']!,
    )!;
    const blob = source.content_blob_hash;
    const cas = join(server.dataDir, 'cas');
    const toolBlob = readdirSync(cas)
      .map((id) => join(cas, id, '.ai/state/objects/blobs', blob.slice(0, 2), blob.slice(2, 4), blob))
      .find((path) => existsSync(path))!;
    writeFileSync(toolBlob, readFileSync(toolBlob, 'utf8').replace("'ran'", "'evil'"));
    const answer = await executeRemote(alice, pushed, {
      item_type: 'tool',
      item_id: 'acme/mark',
      thread: 'inline',
      parameters: { marker },
    });
    expect(answer.json.status).toBe('error');
    expect(answer.json.error_type).toBe('integrity');
    expect(existsSync(marker)).toBe(false);
    expect(await runFoldersLeft()).toEqual([]);
  });
});
