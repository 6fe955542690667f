/**
 * The client end to end (`ryeos` side of remote execution): a real `ryeos-remote` process on
 * 127.0.0.1, a client whose spaces are temp folders of its own, and every call made the way a
 * user makes it: `Rye.execute({target})`, `Rye.remote(action)` and the `rye` CLI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { ObjectStore } from '@ryeos/executor';
import { fingerprint, generateKeyPair } from '@ryeos/lillux';
import { openThreadStore, readThreadJson, threadsStateRoot, verifyTranscript } from '@ryeos/threads';
import { type ReplayServer, startReplayServer } from '@ryeos/threads/testing';
import { createRye, REMOTE_THREAD_ID, type Rye } from 'ryeos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  clientSide,
  nodeTool,
  type RemoteServer,
  removeAll,
  startServer,
} from './helpers.js';

const RYE_CLI = join(import.meta.dirname, '..', '..', 'ryeos', 'dist', 'rye.cjs');
const MCP_SERVER = join(import.meta.dirname, '..', '..', 'ryeos', 'dist', 'mcp-server.js');

const HELLO = nodeTool(
  'acme',
  'console.log(JSON.stringify({ success: true, greeting: `hi ${params.name}` }));',
);

const SUMMARIZE = `# Summarize

\`\`\`xml
<directive name="summarize" version="1.0.0">
  <metadata>
    <description>Summarize a file of the project</description>
    <category>acme</category>
    <author>acme</author>
    <model tier="fast" provider="anthropic"/>
    <limits turns="4" spend="0.5"/>
    <permissions>
      <execute><tool>rye.file-system.read</tool></execute>
    </permissions>
  </metadata>
  <inputs>
    <input name="path" required="true">The file</input>
  </inputs>
  <outputs>
    <output name="summary" required="true">One sentence</output>
  </outputs>
</directive>
\`\`\`

Read {input:path} with the file-system read tool, then return a one-sentence summary.
`;

let server: RemoteServer;
let gpu: RemoteServer;
let provider: ReplayServer;
let client: ClientSide;
let rye: Rye;
let env: Record<string, string>;

function ryeOf(extra: Record<string, string> = {}): Rye {
  return createRye({ projectPath: client.project, env: { ...env, ...extra } });
}

/** The `rye` CLI as a user runs it, in the client's project. */
function cli(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RYE_CLI, ...args], {
      cwd: client.project,
      env: { ...env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  [server, gpu] = await Promise.all([startServer(), startServer()]);
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
  client = await clientSide();
  env = {
    ...client.env,
    RYE_REMOTE_API_KEY: await server.key('alice'),
    RYE_GPU_API_KEY: await gpu.key('alice'),
  };
  rye = ryeOf();
  for (const [name, value] of [
    ['ANTHROPIC_BASE_URL', provider.url],
    ['ANTHROPIC_API_KEY', 'replay-key'],
  ] as const) {
    expect((await server.cli(['secrets', 'set', '--user', 'alice', name], value)).code).toBe(0);
  }
  await client.write('.ai/tools/acme/hello.js', HELLO);
  await client.sign('tool:acme/hello');
  await client.write('.ai/directives/acme/summarize.md', SUMMARIZE);
  await client.sign('directive:acme/summarize');
  await client.write('notes.txt', 'alpha\nbeta\ngamma\n');
  // What must never leave: secrets by name, and a private key whatever its name.
  await client.write('.ai/.env', 'TOKEN=do-not-send\n');
  await client.write('.ai/config/deploy.secrets', 'do-not-send\n');
  await client.write('.ai/knowledge/acme/key.md', generateKeyPair().privateKeyPem);
  await rye.addRemote('default', server.url);
  await rye.addRemote('gpu', gpu.url, { keyEnv: 'RYE_GPU_API_KEY' });
  await mkdir(join(client.project, '.ai', 'config', 'remotes'), { recursive: true });
  await writeFile(
    join(client.project, '.ai', 'config', 'remotes', 'remotes.yaml'),
    'project_name: acme-app\nsync: {include: [".ai/", "notes.txt"], exclude: []}\n',
  );
}, 60_000);

afterAll(async () => {
  await provider?.close();
  await Promise.all([server?.stop(), gpu?.stop()]);
  await removeAll(server?.dataDir, gpu?.dataDir, client?.root);
});

describe('target "remote": a tool', () => {
  it('returns the same result as the local run, signed by the pinned server key', async () => {
    const local = await rye.execute({ item_id: 'tool:acme/hello', parameters: { name: 'Ada' } });
    const remote = await rye.execute({
      item_id: 'tool:acme/hello',
      parameters: { name: 'Ada' },
      target: 'remote',
    });
    expect(remote, JSON.stringify(remote, null, 2)).toMatchObject({
      status: 'success',
      type: 'tool',
      item_id: 'tool:acme/hello',
      execution_mode: 'remote',
      remote_name: 'default',
      thread_id: expect.stringMatching(REMOTE_THREAD_ID),
      execution_snapshot_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      objects_pulled: expect.any(Number),
      system_version: expect.any(String),
    });
    expect((remote.result as { data: unknown }).data).toEqual((local as { data: unknown }).data);
    expect((local as { data: unknown }).data).toEqual({ success: true, greeting: 'hi Ada' });
    // The snapshot it names is now in the local store, checked against its hash.
    const store = ObjectStore.ofSpace(client.project);
    expect(store.getObject(String(remote.execution_snapshot_hash))).toMatchObject({
      kind: 'execution_snapshot',
      graph_run_id: remote.thread_id,
    });
  });

  it('a second push of an unchanged project sends 0 objects', async () => {
    const first = await rye.remote('push');
    const second = await rye.remote('push');
    expect(second).toMatchObject({ objects_synced: 0, project_name: 'acme-app', ref_published: true });
    expect(second.total_objects).toBe(first.total_objects);
    await client.write('.ai/knowledge/acme/new.md', '# new\n');
    // The new file's blob, its item source and the new project manifest: nothing else.
    expect(await rye.remote('push')).toMatchObject({ objects_synced: 3 });
  });

  it('a manifest never carries a private key, .env or *.secrets', async () => {
    const status = await rye.remote('status');
    const store = ObjectStore.ofSpace(client.project);
    const manifest = store.getObject<{ items: object; files: object }>(String(status.project_manifest_hash))!;
    const paths = [...Object.keys(manifest.items), ...Object.keys(manifest.files)];
    expect(paths).toContain('notes.txt');
    expect(paths.filter((path) => /\.env|secrets|key\.md/.test(path))).toEqual([]);
    const user = store.getObject<{ items: object; files: object }>(String(status.user_manifest_hash))!;
    expect(Object.keys({ ...user.items, ...user.files }).some((path) => path.includes('private_key'))).toBe(
      false,
    );
    expect(status.remotes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'default', key_set: true }),
        expect.objectContaining({ name: 'gpu', key_env: 'RYE_GPU_API_KEY', key_set: true }),
      ]),
    );
  });

  it('the CLI: rye execute --target remote:gpu runs on the named remote', async () => {
    const run = await cli([
      'execute',
      'tool:acme/hello',
      '--params',
      '{"name":"Grace"}',
      '--target',
      'remote:gpu',
    ]);
    const reply = JSON.parse(run.stdout);
    expect(reply, run.stderr).toMatchObject({
      status: 'success',
      execution_mode: 'remote',
      remote_name: 'gpu',
      result: { data: { greeting: 'hi Grace' } },
    });
    const threads = await rye.remote('threads', { remote: 'gpu' });
    expect((threads.threads as Array<{ thread_id: string }>).map((row) => row.thread_id)).toContain(
      reply.thread_id,
    );
    expect(await rye.remote('thread_status', { remote: 'gpu', thread_id: reply.thread_id })).toMatchObject({
      thread_id: reply.thread_id,
      status: 'completed',
    });
  });
});

describe('target "remote" over MCP', () => {
  it('the execute tool of ryeos-mcp runs a tool on the remote', async () => {
    const mcp = spawn(process.execPath, [MCP_SERVER], {
      cwd: client.project,
      env,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      const reply = await mcpCall(mcp, 'tools/call', {
        name: 'execute',
        arguments: {
          item_id: 'tool:acme/hello',
          parameters: { name: 'MCP' },
          target: 'remote',
          project_path: client.project,
        },
      });
      const text = (reply.content as Array<{ text: string }>)[0]!.text;
      expect(JSON.parse(text), text).toMatchObject({
        status: 'success',
        execution_mode: 'remote',
        remote_name: 'default',
        result: { data: { greeting: 'hi MCP' } },
      });
    } finally {
      mcp.kill('SIGTERM');
    }
  });
});

/** One MCP request over a server's stdio (newline-delimited JSON-RPC), after the handshake. */
async function mcpCall(
  server: ChildProcess,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  let buffered = '';
  const answers = new Map<number, (result: Record<string, unknown>) => void>();
  server.stdout!.on('data', (chunk) => {
    buffered += chunk;
    let end = buffered.indexOf('\n');
    while (end !== -1) {
      const message = JSON.parse(buffered.slice(0, end)) as { id?: number; result?: Record<string, unknown> };
      buffered = buffered.slice(end + 1);
      if (message.id !== undefined) answers.get(message.id)?.(message.result ?? {});
      end = buffered.indexOf('\n');
    }
  });
  const send = (message: Record<string, unknown>) =>
    server.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const request = (id: number, name: string, body: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      answers.set(id, resolve);
      send({ id, method: name, params: body });
    });
  await request(1, 'initialize', {
    protocolVersion: '2025-03-26',
    capabilities: {},
    clientInfo: { name: 'client-e2e', version: '1.0.0' },
  });
  send({ method: 'notifications/initialized' });
  return request(2, method, params);
}

describe('target "remote": a forked directive', () => {
  it('runs on the server against the scripted provider; its records come back and verify with the pinned key', async () => {
    const reply = await rye.execute({
      item_id: 'directive:acme/summarize',
      thread: 'fork',
      target: 'remote',
      parameters: { path: 'notes.txt' },
    });
    expect(reply, JSON.stringify(reply, null, 2)).toMatchObject({
      status: 'success',
      type: 'directive',
      execution_mode: 'remote',
      result: { status: 'success', outputs: { summary: 'Three greek letters.' } },
    });
    expect(JSON.stringify(provider.requests[1]?.body)).toContain('beta');
    const store = ObjectStore.ofSpace(client.project);
    const snapshot = store.getObject<{ artifact_index_hash: string }>(String(reply.execution_snapshot_hash))!;
    const index = store.getObject<{ entries: Record<string, string> }>(snapshot.artifact_index_hash)!;
    const serverThread = String((reply.result as { thread_id: string }).thread_id);
    const records = join(client.root, 'records');
    for (const [path, hash] of Object.entries(index.entries)) {
      await mkdir(join(records, path, '..'), { recursive: true });
      await writeFile(join(records, path), store.getBlob(hash)!);
    }
    const pinned = (await rye.remote('list')).remotes as Array<{ name: string; pinned_fingerprint: string }>;
    const pin = pinned.find((row) => row.name === 'default')!.pinned_fingerprint;
    const serverKey = (await (await fetch(`${server.url}/public-key`)).json()) as { public_key_pem: string };
    expect(fingerprint(serverKey.public_key_pem)).toBe(pin);
    const trust = (fp: string) => (fp === pin ? { publicKeyPem: serverKey.public_key_pem } : undefined);
    const dir = join(records, '.ai', 'state', 'threads', serverThread);
    expect((await readThreadJson(dir, trust)).data).toMatchObject({
      thread_id: serverThread,
      status: 'completed',
    });
    expect((await verifyTranscript(join(dir, 'transcript.jsonl'), trust)).valid).toBe(true);
  });
});

describe('async: true with a remote target', () => {
  it('gives a local thread id at once; rye threads wait follows it; the row records the server thread', async () => {
    const started = await rye.execute({
      item_id: 'tool:acme/hello',
      parameters: { name: 'Async' },
      target: 'remote',
      async: true,
    });
    expect(started).toMatchObject({
      status: 'success',
      async: true,
      execution_mode: 'remote',
      state: 'running',
    });
    const threadId = String(started.thread_id);
    expect(threadId).not.toMatch(REMOTE_THREAD_ID);
    const waited = await cli(['threads', 'wait', threadId, '--timeout', '120']);
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const shown = await cli(['threads', 'show', threadId]);
    expect(shown.code, shown.stdout + shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'success', thread_status: 'completed' });
    const store = openThreadStore(threadsStateRoot(client.project));
    try {
      const row = await store.registry.getThread(threadId);
      expect(row?.status).toBe('completed');
      const result = row?.result as Record<string, unknown>;
      expect(result.remote_thread_id).toMatch(REMOTE_THREAD_ID);
      expect(result.envelope).toMatchObject({
        execution_mode: 'remote',
        result: { data: { greeting: 'hi Async' } },
      });
    } finally {
      await store.close();
    }
  });
});

describe('errors are one clear line each', () => {
  it('an unknown remote, a missing key variable, an unreachable server', async () => {
    const unknown = await rye.execute({ item_id: 'tool:acme/hello', target: 'remote:tpu' });
    expect(unknown).toMatchObject({
      status: 'error',
      error_type: 'not_found',
      error: "Unknown remote 'tpu'. Configured remotes: default, gpu.",
    });
    const noKey = await ryeOf({ RYE_GPU_API_KEY: '' }).execute({
      item_id: 'tool:acme/hello',
      target: 'remote:gpu',
    });
    expect(noKey).toMatchObject({
      status: 'error',
      error_type: 'config',
      error: "The API key variable RYE_GPU_API_KEY of remote 'gpu' is not set.",
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await rye.addRemote('gone', `http://127.0.0.1:${port}`);
    const gone = await rye.execute({ item_id: 'tool:acme/hello', target: 'remote:gone' });
    expect(gone).toMatchObject({ status: 'error', error_type: 'unavailable' });
    expect(gone.error).toBe(`Cannot reach remote 'gone' at http://127.0.0.1:${port} (ECONNREFUSED).`);
    expect(gone.hint).toMatch(/ryeos-remote serve/);
  });

  it('a pinned client refuses a server whose key changed', async () => {
    const port = new URL(gpu.url).port;
    await gpu.stop();
    gpu = await startServer({ args: ['--port', port] });
    const reply = await rye.execute({ item_id: 'tool:acme/hello', target: 'remote:gpu' });
    expect(reply).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(reply.error).toMatch(
      /now serves key [0-9a-f]{16}, not the key [0-9a-f]{16} pinned on first contact/,
    );
    expect(reply.hint).toContain('rye remote trust gpu --replace');
  });
});
