/**
 * A run's tool processes are confined (Landlock): a user's own rye/bash cannot read the server's
 * database or key, another user's store, a concurrent run's folder, or /proc/<pid>/environ of
 * that run's tool; honest node, python and bash tools give the same results as before; nothing a
 * user pushes or stores (a .env, secrets named like settings) loosens it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { landlockSupport } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  call,
  clientSide,
  nodeTool,
  type RemoteServer,
  removeAll,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const available = landlockSupport().abi > 0;
let server: RemoteServer;
const sides: ClientSide[] = [];

beforeAll(async () => {
  if (available) server = await startServer();
});
afterAll(async () => {
  await server?.stop();
  await removeAll(server?.dataDir, ...sides.map((s) => s.root));
});

interface User {
  key: string;
  side: ClientSide;
  pushed: { project: string; user: string };
}

async function user(name: string, secrets: Record<string, string> = {}, files: Record<string, string> = {}) {
  const key = await server.key(name);
  for (const [secret, value] of Object.entries(secrets)) {
    const set = await server.cli(['secrets', 'set', '--user', name, secret], `${value}\n`);
    expect(set.code, set.stderr).toBe(0);
  }
  const side = await clientSide();
  sides.push(side);
  for (const [path, text] of Object.entries(files)) await side.write(path, text);
  for (const path of Object.keys(files)) {
    const match = /^\.ai\/tools\/(.+)\.\w+$/.exec(path);
    if (match) await side.sign(`tool:${match[1]}`);
  }
  return { key, side, pushed: await side.push(server, key) } satisfies User;
}

function execute(who: User, itemId: string, parameters: Record<string, unknown>) {
  return call(server, '/execute', {
    key: who.key,
    body: {
      project_manifest_hash: who.pushed.project,
      user_manifest_hash: who.pushed.user,
      system_version: SYSTEM_VERSION,
      item_type: 'tool',
      item_id: itemId,
      thread: 'inline',
      parameters,
    },
  });
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

/** Waits for a run folder holding `home/<file>`; returns the folder. */
async function runHolding(file: string): Promise<string> {
  const runs = join(server.dataDir, 'runs');
  for (let i = 0; i < 200; i++) {
    for (const name of readdirSync(runs)) {
      try {
        statSync(join(runs, name, 'home', file));
        return join(runs, name);
      } catch {
        // not this one, or not yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no run wrote home/${file}`);
}

/** A bash command printing each file's first bytes, or why it could not. */
const peekAt = (paths: string[]) =>
  paths.map((path) => `echo "== ${path}"; head -c 300 '${path}' 2>&1; echo`).join('; ');

/** What alice's rye/bash read of each target: its text, or cat's error. */
function sections(stdout: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of stdout.split('== ').slice(1)) {
    const nl = part.indexOf('\n');
    found.set(part.slice(0, nl), part.slice(nl + 1));
  }
  return found;
}

describe.runIf(available)('a confined remote run', () => {
  it("cannot read the server's database and key, another user's store or a concurrent run's files and environ", async () => {
    // A pushed .env and secrets named like switches reach nothing that decides the confinement.
    const alice = await user(
      'alice',
      { CONFINE: '0', UNCONFINED_RUNS: '1', LANDLOCK: 'off' },
      { '.env': 'RYE_CONFINE=0\nRYE_UNCONFINED_RUNS=1\nRYE_WARM_WORKERS=0\nRYE_DEV_MODE=1\n' },
    );
    const bob = await user('bob', { BOB_TOKEN: 'bob-secret-token-value' });
    // Bob's run: a file in its folder, its pid where the test finds it, then it waits.
    const bobRun = execute(bob, 'rye/bash', {
      command:
        'echo bob-file-secret > "$HOME/secret.txt"; echo $$ > "$HOME/pid.tmp"; mv "$HOME/pid.tmp" "$HOME/pid"; sleep 6',
    });
    const bobFolder = await runHolding('pid');
    const bobPid = readFileSync(join(bobFolder, 'home', 'pid'), 'utf8').trim();
    // One object of every user's store: alice's run reads none of them, bob's included.
    const stores = readdirSync(join(server.dataDir, 'cas'));
    expect(stores.length).toBeGreaterThanOrEqual(2);
    const objects = Object.fromEntries(
      stores.map((id) => [
        `store ${id}`,
        filesUnder(join(server.dataDir, 'cas', id)).find((p) => p.includes('objects'))!,
      ]),
    );
    const targets = {
      db: join(server.dataDir, 'remote.db'),
      key: filesUnder(join(server.dataDir, 'signing')).find((path) => /priv|key/i.test(path))!,
      ...objects,
      folder: join(bobFolder, 'home', 'secret.txt'),
      environ: `/proc/${bobPid}/environ`,
    };
    const attack = await execute(alice, 'rye/bash', { command: peekAt(Object.values(targets)) });
    const seen = sections(String(attack.json.result?.data?.stdout ?? ''));
    expect(seen.size, JSON.stringify(attack.json)).toBe(Object.keys(targets).length);
    for (const [what, path] of Object.entries(targets)) {
      expect.soft(seen.get(path), `${what}: ${path}`).toMatch(/Permission denied|Operation not permitted/);
    }
    const everything = JSON.stringify(attack.json);
    expect(everything).not.toContain('SQLite format');
    expect(everything).not.toContain('PRIVATE KEY');
    expect(everything).not.toContain('bob-file-secret');
    expect(everything).not.toContain('bob-secret-token-value');
    const bobAnswer = await bobRun;
    expect(bobAnswer.json.status, JSON.stringify(bobAnswer.json)).toBe('success');
  }, 60_000);

  it('runs honest node and python (one-shot and warm function) and bash tools as before', async () => {
    const carol = await user(
      'carol',
      {},
      {
        '.ai/tools/acme/node_echo.js': nodeTool(
          'acme',
          `const { writeFileSync, readFileSync } = await import('node:fs');
writeFileSync(process.env.TMPDIR + '/n', String(params.n));
console.log(JSON.stringify({ success: true, n: Number(readFileSync(process.env.TMPDIR + '/n', 'utf8')) }));`,
        ),
        '.ai/tools/acme/node_function.js': [
          "export const __version__ = '1.0.0';",
          "export const __executor_id__ = 'rye/core/runtimes/node/function';",
          "export const __category__ = 'acme';",
          "export const __tool_description__ = 'node function';",
          'export async function execute(params) { return { success: true, n: params.n }; }',
          '',
        ].join('\n'),
        '.ai/tools/acme/py_script.py': `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme"
__tool_description__ = "python script"
import json, os, sys, tempfile
p = json.load(sys.stdin)
with tempfile.NamedTemporaryFile("w", delete=False) as f:
    f.write(str(p["n"]))
print(json.dumps({"success": True, "n": int(open(f.name).read())}))
`,
        '.ai/tools/acme/py_function.py': `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "acme"
__tool_description__ = "python function"
async def execute(params, project_path):
    return {"success": True, "n": params["n"]}
`,
      },
    );
    for (const tool of ['acme/node_echo', 'acme/node_function', 'acme/py_script', 'acme/py_function']) {
      const answer = await execute(carol, tool, { n: 7 });
      expect(answer.json.status, JSON.stringify(answer.json)).toBe('success');
      expect(answer.json.result.data).toMatchObject({ success: true, n: 7 });
    }
    const bash = await execute(carol, 'rye/bash', {
      command: 'echo hi > "$TMPDIR/x"; cat "$TMPDIR/x"; ls . >/dev/null',
    });
    expect(bash.json.status, JSON.stringify(bash.json)).toBe('success');
    expect(bash.json.result.data.stdout).toBe('hi\n');
  }, 60_000);
});

describe('a server that cannot confine its runs', () => {
  // No python3 on its PATH: the launcher cannot run, exactly as where Landlock is missing.
  const noPython = { PATH: '/nonexistent' };

  it('refuses to start', async () => {
    await expect(startServer({ env: noPython })).rejects.toThrow(
      /runs cannot be confined here[\s\S]*--unconfined-runs/,
    );
  });

  it("starts with --unconfined-runs, warning that tools run with the server's rights, and runs from its pool", async () => {
    const unconfined = await startServer({ env: noPython, args: ['--unconfined-runs'] });
    const client = await clientSide();
    try {
      expect(unconfined.stderr()).toContain("every user's tools run with this server's rights");
      const key = await unconfined.key('dave');
      await client.write(
        '.ai/tools/acme/echo.js',
        nodeTool('acme', 'console.log(JSON.stringify({ success: true, n: params.n }));'),
      );
      await client.sign('tool:acme/echo');
      const pushed = await client.push(unconfined, key);
      const answer = await call(unconfined, '/execute', {
        key,
        body: {
          project_manifest_hash: pushed.project,
          user_manifest_hash: pushed.user,
          system_version: SYSTEM_VERSION,
          item_type: 'tool',
          item_id: 'acme/echo',
          thread: 'inline',
          parameters: { n: 3 },
        },
      });
      expect(answer.json.status, JSON.stringify(answer.json)).toBe('success');
      expect(answer.json.result.data).toMatchObject({ success: true, n: 3 });
    } finally {
      await unconfined.stop();
      // Its spare workers went with it, folders and all.
      expect(readdirSync(join(unconfined.dataDir, 'runs'))).toEqual([]);
      await removeAll(unconfined.dataDir, client.root);
    }
  });
});
