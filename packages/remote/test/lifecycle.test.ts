/**
 * A remote thread's row through its life: `running` while the run goes on, then `completed`; a
 * server killed mid-run leaves a row that the next start marks `error`, and temp spaces that it
 * removes. SIGINT stops the server as cleanly as SIGTERM.
 */
import { readdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  type ClientSide,
  call,
  clientSide,
  nodeTool,
  type RemoteServer,
  removeAll,
  runBin,
  runsInUse,
  runsLeft,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const SLOW = nodeTool(
  'acme',
  'await new Promise((resolve) => setTimeout(resolve, params.ms)); console.log(JSON.stringify({ success: true }));',
);

let client: ClientSide;

beforeAll(async () => {
  client = await clientSide();
  await client.write('.ai/tools/acme/slow.js', SLOW);
  await client.sign('tool:acme/slow');
});
afterAll(async () => {
  await removeAll(client.root);
});

/** Starts a run and resolves once it is under way, with its answer still to come. */
async function startSlowRun(
  server: RemoteServer,
  key: string,
  ms: number,
): Promise<{ answer: Promise<Answer> }> {
  const pushed = await client.push(server, key);
  const answer = call(server, '/execute', {
    key,
    body: {
      project_manifest_hash: pushed.project,
      user_manifest_hash: pushed.user,
      system_version: SYSTEM_VERSION,
      item_type: 'tool',
      item_id: 'acme/slow',
      thread: 'inline',
      parameters: { ms },
    },
  });
  // Wait until the run has its row and its temp spaces.
  for (;;) {
    const rows = (await call(server, '/threads', { key })).json.threads as Array<{ status: string }>;
    if (rows.some((row) => row.status === 'running') && runsInUse(server.dataDir).length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { answer };
}

describe('remote thread rows', () => {
  it('say running during the run, then completed', async () => {
    const server = await startServer();
    try {
      const key = await server.key('alice');
      const { answer: pending } = await startSlowRun(server, key, 1500);
      const during = await call(server, '/threads', { key });
      expect(during.json.threads).toEqual([
        expect.objectContaining({ status: 'running', finished_at: null }),
      ]);
      const done = await pending;
      expect(done.json.status).toBe('success');
      const row = await call(server, `/threads/${done.json.thread_id}`, { key });
      expect(row.json).toMatchObject({
        status: 'completed',
        execution_snapshot_hash: done.json.execution_snapshot_hash,
      });
      expect(row.json.finished_at).toEqual(expect.any(String));
    } finally {
      expect(await server.stop()).toBe(0);
      await removeAll(server.dataDir);
    }
  });

  it('of a server killed mid-run are marked error at the next start, and its temp spaces removed', async () => {
    const first = await startServer();
    const key = await first.key('alice');
    const { answer } = await startSlowRun(first, key, 2000);
    const pending = answer.catch(() => undefined);
    first.process.kill('SIGKILL');
    expect(await pending).toBeUndefined(); // the connection died with the server
    const second = await startServer({ dataDir: first.dataDir });
    try {
      const rows = (await call(second, '/threads', { key })).json.threads;
      expect(rows).toEqual([expect.objectContaining({ status: 'error', execution_snapshot_hash: null })]);
      expect(await runsLeft(second.dataDir)).toEqual([]);
    } finally {
      await second.stop();
      await removeAll(second.dataDir);
    }
  });

  it('a run over --max-run-seconds is stopped and answered as an error that says why', async () => {
    const server = await startServer({ args: ['--max-run-seconds', '1'] });
    try {
      const key = await server.key('alice');
      const { answer } = await startSlowRun(server, key, 60_000);
      const stopped = await answer;
      expect(stopped.status).toBe(200);
      expect(stopped.json.status).toBe('error');
      expect(stopped.json.result).toMatchObject({
        status: 'error',
        hint: expect.stringMatching(/--max-run-seconds/),
      });
      const row = await call(server, `/threads/${stopped.json.thread_id}`, { key });
      expect(row.json.status).toBe('error');
      expect(await runsLeft(server.dataDir)).toEqual([]);
    } finally {
      expect(await server.stop()).toBe(0);
      await removeAll(server.dataDir);
    }
  });

  it('SIGTERM during a run stops it, answers it, records its row, and exits 0', async () => {
    const server = await startServer();
    const key = await server.key('alice');
    const { answer } = await startSlowRun(server, key, 60_000);
    const exited = server.stop();
    const stopped = await answer;
    expect(stopped.json.result).toMatchObject({
      status: 'error',
      hint: expect.stringMatching(/server was stopping/),
    });
    expect(await exited).toBe(0);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(server.dataDir, 'remote.db'), { readonly: true });
    expect(db.prepare('SELECT status FROM threads').all()).toEqual([{ status: 'error' }]);
    db.close();
    expect(readdirSync(join(server.dataDir, 'runs'))).toEqual([]);
    await removeAll(server.dataDir);
  });

  it('one server per data dir, and a port in use, are refused with a hint', async () => {
    const server = await startServer();
    try {
      const again = await runBin(['serve', '--port', '0', '--data-dir', server.dataDir]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/Another ryeos-remote \(pid \d+\) is serving[\s\S]*hint: /);
      const other = await mkdtemp(join(tmpdir(), 'remote-other-'));
      const port = new URL(server.url).port;
      const busy = await runBin(['serve', '--port', port, '--data-dir', other]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(
        new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use[\\s\\S]*hint: Pick another port`),
      );
      expect(busy.stderr).not.toMatch(/\n\s+at /);
      // The refused server left the other data dir unlocked.
      expect(readdirSync(other)).not.toContain('serve.lock');
      await removeAll(other);
    } finally {
      await server.stop();
      await removeAll(server.dataDir);
    }
  });

  it('a server stops on SIGINT with exit code 0', async () => {
    const server = await startServer();
    const exited = new Promise<number | null>((resolve) => server.process.once('exit', resolve));
    server.process.kill('SIGINT');
    expect(await exited).toBe(0);
    await removeAll(server.dataDir);
  });
});
