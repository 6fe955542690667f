/**
 * Run workers started ahead (`--run-pool`): each waits confined to a fresh empty folder of its
 * own with a generic environment, a run takes one, and a worker serves that one run and is gone
 * with its folder, so no secret, file or memory of a run or user reaches the next.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  call,
  clientSide,
  type RemoteServer,
  RUN_POOL,
  removeAll,
  runBin,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

interface SpareWorker {
  pid: number;
  /** Its working folder: the run folder it is confined to. */
  dir: string;
  env: Record<string, string>;
}

/** The live run-worker node processes whose folder is under `dataDir`/runs. */
function workersOf(dataDir: string): SpareWorker[] {
  const runs = join(dataDir, 'runs');
  const found: SpareWorker[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (!argv[1]?.endsWith('run-worker.js')) continue;
      const dir = readlinkSync(`/proc/${name}/cwd`);
      if (dirname(dir) !== runs) continue;
      const env = Object.fromEntries(
        readFileSync(`/proc/${name}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      found.push({ pid: Number(name), dir, env });
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return found;
}

async function until<T>(check: () => T | undefined, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the server has `count` spare workers, and returns them. */
const spares = (server: RemoteServer, count = RUN_POOL) =>
  until(() => {
    const found = workersOf(server.dataDir);
    return found.length === count ? found : undefined;
  });

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

function bashRun(pushed: { project: string; user: string }, command: string) {
  return {
    project_manifest_hash: pushed.project,
    user_manifest_hash: pushed.user,
    system_version: SYSTEM_VERSION,
    item_type: 'tool',
    item_id: 'rye/bash',
    thread: 'inline',
    parameters: { command },
  };
}

describe('run workers started ahead', () => {
  let server: RemoteServer;
  let client: ClientSide;
  const keys: Record<string, string> = {};
  let pushed: { project: string; user: string };

  beforeAll(async () => {
    server = await startServer();
    client = await clientSide();
    for (const user of ['alice', 'bob']) {
      keys[user] = await server.key(user);
      const set = await server.cli(['secrets', 'set', '--user', user, 'SECRET_TOKEN'], `${user}-secret`);
      expect(set.code, set.stderr).toBe(0);
    }
    pushed = await client.push(server, keys.alice!);
    await client.push(server, keys.bob!);
  });

  afterAll(async () => {
    await server.stop();
    await removeAll(server.dataDir, client.root);
  });

  it('wait before any request, each in an empty folder of its own, with no secret in their environment', async () => {
    const ready = await spares(server);
    expect(new Set(ready.map((worker) => worker.dir)).size).toBe(RUN_POOL);
    for (const worker of ready) {
      expect(readdirSync(worker.dir)).toEqual([]);
      expect(Object.keys(worker.env).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR']);
      expect(worker.env.HOME).toBe(join(worker.dir, 'home'));
    }
  });

  it('a run takes a ready worker, which serves that run only and is gone with its folder', async () => {
    const seen: string[] = [];
    for (const user of ['alice', 'bob', 'alice']) {
      const before = await spares(server);
      const run = await call(server, '/execute', {
        key: keys[user]!,
        body: bashRun(pushed, 'echo "$HOME|$SECRET_TOKEN"'),
      });
      expect(run.json.status, JSON.stringify(run.json)).toBe('success');
      const [home, secret] = String(run.json.result.data.stdout).trim().split('|');
      expect(secret).toBe(`${user}-secret`);
      const used = before.find((worker) => worker.dir === dirname(home!));
      // The run went to a worker that was waiting before the request came.
      expect(used, `${home} is not a spare worker's folder`).toBeDefined();
      // Gone with its folder once it has exited (after the answer, in the background).
      await until(() => (!alive(used!.pid) && !existsSync(used!.dir) ? true : undefined));
      seen.push(used!.dir);
      // Refilled: fresh workers, none of them the one used, none holding a secret.
      const after = await spares(server);
      expect(after.map((worker) => worker.pid)).not.toContain(used!.pid);
      for (const worker of after) expect(JSON.stringify(worker.env)).not.toContain('-secret');
    }
    expect(new Set(seen).size).toBe(3);
  });

  it("a run's tools cannot plant a file in a spare worker's folder (the next run's spaces)", async () => {
    const before = await spares(server);
    const tries = before
      .map((worker) => `mkdir -p '${worker.dir}/project' 2>&1 && touch '${worker.dir}/project/planted' 2>&1`)
      .join('; ');
    const run = await call(server, '/execute', {
      key: keys.alice!,
      body: bashRun(pushed, `echo "HOME=$HOME"; ${tries}; true`),
    });
    expect(run.json.status, JSON.stringify(run.json)).toBe('success');
    const out = String(run.json.result.data.stdout);
    const taken = dirname(/HOME=(\S+)/.exec(out)![1]!);
    const others = before.filter((worker) => worker.dir !== taken);
    expect(others).toHaveLength(RUN_POOL - 1);
    expect(out).toMatch(/Permission denied/);
    for (const worker of others) expect(readdirSync(worker.dir)).toEqual([]);
  });
});

describe('--run-pool', () => {
  it('0 keeps no spare worker: each run starts its own, and nothing is left after', async () => {
    const server = await startServer({ args: ['--run-pool', '0'] });
    const client = await clientSide();
    try {
      const key = await server.key('alice');
      const pushed = await client.push(server, key);
      expect(readdirSync(join(server.dataDir, 'runs'))).toEqual([]);
      const run = await call(server, '/execute', { key, body: bashRun(pushed, 'echo ran') });
      expect(run.json.result.data.stdout).toContain('ran');
      await until(() => (readdirSync(join(server.dataDir, 'runs')).length === 0 ? true : undefined));
      expect(workersOf(server.dataDir)).toEqual([]);
    } finally {
      await server.stop();
      await removeAll(server.dataDir, client.root);
    }
  });

  it('refuses a value that is not a whole number from 0 to 16, with a hint', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'run-pool-'));
    try {
      for (const value of ['-1', '17', 'two']) {
        const run = await runBin(['serve', '--port', '0', `--run-pool=${value}`], {
          env: { ...process.env, RYE_REMOTE_HOME: dataDir },
        });
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/--run-pool must be a whole number from 0 to 16/);
        expect(run.stderr).toMatch(/hint: /);
      }
    } finally {
      await removeAll(dataDir);
    }
  });
});
