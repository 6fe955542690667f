/**
 * Each execution runs in a confined worker process under a supervisor (a child subreaper): what a
 * run leaves behind (a setsid daemon swapping folders for links) can neither redirect the removal
 * of its folder, nor make the server hand back or write a file outside the run, nor outlive the
 * run, its timeout, the server's stop or the client going away.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '@ryeos/executor';
import { startReplayServer } from '@ryeos/threads/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  type ClientSide,
  call,
  clientSide,
  type RemoteServer,
  removeAll,
  runsInUse,
  runsLeft,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

/** The pids of live processes whose command line holds `marker` (zombies have none). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function killAll(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * A setsid'd sleeper and a double-forked busy loop named `marker`, which would run for an hour;
 * the marker is split by empty quotes in the command text, so only they carry it whole.
 */
function orphanCommand(marker: string): string {
  const named = `${marker.slice(0, 3)}""${marker.slice(3)}`;
  return `setsid bash -c "exec -a ${named} sleep 3600" </dev/null >/dev/null 2>&1 & ( setsid bash -c "exec -a ${named}-burn python3 -c 'while 1: pass'" </dev/null >/dev/null 2>&1 & ) ; echo started`;
}

function executeBody(pushed: { project: string; user: string }, itemId: string, parameters: unknown) {
  return {
    project_manifest_hash: pushed.project,
    user_manifest_hash: pushed.user,
    system_version: SYSTEM_VERSION,
    item_type: 'tool',
    item_id: itemId,
    thread: 'inline',
    parameters,
  };
}

const DIRECTIVE = `# X

\`\`\`xml
<directive name="x" version="1.0.0">
  <metadata>
    <description>Runs one bash command</description>
    <category>acme</category>
    <author>acme</author>
    <model tier="fast" provider="anthropic"/>
    <limits turns="4" spend="0.5"/>
    <permissions>
      <execute><tool>rye.bash</tool></execute>
    </permissions>
  </metadata>
  <outputs>
    <output name="summary" required="true">One sentence</output>
  </outputs>
</directive>
\`\`\`

Run bash.
`;

/** A forked directive whose scripted model runs `bash` once through rye/bash, then returns. */
async function forkRunningBash(server: RemoteServer, key: string, bash: string): Promise<Answer> {
  const provider = await startReplayServer({
    turns: [
      { tool_calls: [{ id: 'toolu_1', name: 'rye_bash', input: { command: bash } }] },
      { tool_calls: [{ id: 'toolu_2', name: 'rye_directive_return', input: { summary: 'done' } }] },
    ],
  });
  const client = await clientSide();
  try {
    for (const [name, value] of [
      ['ANTHROPIC_BASE_URL', provider.url],
      ['ANTHROPIC_API_KEY', 'replay-key'],
    ] as const) {
      const set = await server.cli(['secrets', 'set', '--user', 'alice', name], value);
      expect(set.code, set.stderr).toBe(0);
    }
    await client.write('.ai/directives/acme/x.md', DIRECTIVE);
    await client.sign('directive:acme/x');
    const pushed = await client.push(server, key);
    return await call(server, '/execute', {
      key,
      body: {
        project_manifest_hash: pushed.project,
        user_manifest_hash: pushed.user,
        system_version: SYSTEM_VERSION,
        item_type: 'directive',
        item_id: 'acme/x',
        thread: 'fork',
        parameters: {},
      },
    });
  } finally {
    await provider.close();
    await removeAll(client.root);
  }
}

async function objectsOf(server: RemoteServer, key: string, answer: Answer): Promise<Buffer[]> {
  const got = await call(server, '/objects/get', {
    key,
    body: { hashes: answer.json.new_object_hashes ?? [] },
  });
  return (got.json.entries as Array<{ data: string }>).map((entry) => Buffer.from(entry.data, 'base64'));
}

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a run in its own confined worker', () => {
  let server: RemoteServer;
  let key: string;
  let client: ClientSide;
  let pushed: { project: string; user: string };

  beforeAll(async () => {
    server = await startServer({ args: ['--max-run-seconds', '20'] });
    key = await server.key('alice');
    await server.key('bob');
    const secret = await server.cli(['secrets', 'set', '--user', 'bob', 'BOB_TOKEN'], 'bob-secret-value');
    expect(secret.code, secret.stderr).toBe(0);
    client = await clientSide();
    pushed = await client.push(server, key);
  });

  afterAll(async () => {
    await server.stop();
    await removeAll(server.dataDir, client.root);
  });

  it('a process the run detaches (setsid, double fork) does not outlive the run', async () => {
    const marker = `rwtest-end-${process.pid}`;
    try {
      const run = await call(server, '/execute', {
        key,
        body: executeBody(pushed, 'rye/bash', { command: orphanCommand(marker) }),
      });
      expect(run.json.result.data.stdout).toContain('started');
      // The answer comes first; the supervisor's cleanup (descendants killed, folder removed) follows.
      expect(await runsLeft(server.dataDir)).toEqual([]);
      await until(() => processesWith(marker).length === 0);
    } finally {
      killAll(marker);
    }
  });

  it('the execution snapshot names the request it answers (request_hash)', async () => {
    const body = executeBody(pushed, 'rye/bash', { command: 'echo hi' });
    const run = await call(server, '/execute', { key, body });
    const got = await call(server, '/objects/get', {
      key,
      body: { hashes: [run.json.execution_snapshot_hash] },
    });
    const snapshot = JSON.parse(Buffer.from(got.json.entries[0].data, 'base64').toString('utf8'));
    expect(snapshot.kind).toBe('execution_snapshot');
    expect(snapshot.request_hash).toBe(createHash('sha256').update(canonicalJson(body)).digest('hex'));
  });

  it('a client that closes its request stops the run, and its row ends error', async () => {
    const marker = `rwtest-abort-${process.pid}`;
    try {
      const aborter = new AbortController();
      const pending = fetch(`${server.url}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(
          executeBody(pushed, 'rye/bash', { command: `${orphanCommand(marker)}; sleep 60` }),
        ),
        signal: aborter.signal,
      }).catch(() => undefined);
      await until(() => processesWith(marker).length > 0);
      aborter.abort();
      await pending;
      await until(async () => {
        const rows = (await call(server, '/threads', { key })).json.threads as Array<{ status: string }>;
        return rows.every((row) => row.status !== 'running');
      });
      const rows = (await call(server, '/threads', { key })).json.threads as Array<{ status: string }>;
      expect(rows[0]?.status).toBe('error');
      await until(() => runsInUse(server.dataDir).length === 0);
      await until(() => processesWith(marker).length === 0);
    } finally {
      killAll(marker);
    }
  });

  it('a forked run cannot make the server hand back a file through a folder swapped for a link', {
    timeout: 90_000,
  }, async () => {
    for (const [name, folder] of [
      ['private_key.pem', 'signing'],
      ['remote.db-wal', ''],
    ] as const) {
      const bash = `
cd "$RYE_PROJECT_PATH"; T=$(find .ai/state/threads -mindepth 3 -maxdepth 3 -type d | head -1)
DATA=$(dirname "$(dirname "$(dirname "$HOME")")")
mkdir "$T/sub"; (cd "$T/sub"; for i in $(seq 1 1000); do : > d$i; done; : > ${name})
cat > "$HOME/d.py" <<'PY'
${fixture('swap-after-listing.py')}
PY
setsid python3 "$HOME/d.py" "$PWD/$T/sub" "$DATA/${folder}" </dev/null >/dev/null 2>&1 &
sleep 0.3; echo started`;
      const run = await forkRunningBash(server, key, bash);
      expect(run.status).toBe(200);
      const real = readFileSync(join(server.dataDir, folder, name));
      for (const bytes of await objectsOf(server, key, run)) {
        expect(bytes.equals(real)).toBe(false);
        expect(bytes.toString('latin1')).not.toContain('PRIVATE KEY');
        expect(bytes.toString('latin1')).not.toContain('bob-secret-value');
      }
    }
  });

  it('a forked run cannot make the server write its records outside the run', {
    timeout: 90_000,
  }, async () => {
    const victim = mkdtempSync(join(tmpdir(), 'remote-victim-'));
    try {
      const bash = `
cd "$RYE_PROJECT_PATH"; T=$(find .ai/state/threads -mindepth 3 -maxdepth 3 -type d | head -1)
mkdir -p .ai/knowledge/agent/threads/acme
ln -s ${victim} .ai/knowledge/agent/threads/acme/x || true
mv "$T" "$T-real"; ln -s ${victim} "$T" || true
echo planted`;
      const run = await forkRunningBash(server, key, bash);
      expect(run.status).toBe(200);
      expect(readdirSync(victim)).toEqual([]);
    } finally {
      await removeAll(victim);
    }
  });

  it('huge sparse records are refused by their size, not read (507), and the server lives on', {
    timeout: 90_000,
  }, async () => {
    const bash = `
cd "$RYE_PROJECT_PATH"; T=$(find .ai/state/threads -mindepth 3 -maxdepth 3 -type d | head -1)
truncate -s 1G "$T/big1" "$T/big2" "$T/big3"; echo planted`;
    const run = await forkRunningBash(server, key, bash);
    expect(run.status).toBe(507);
    expect(run.json).toMatchObject({ error_type: 'limit', hint: expect.any(String) });
    expect((await call(server, '/health')).status).toBe(200);
    const rows = (await call(server, '/threads', { key })).json.threads as Array<{ status: string }>;
    expect(rows[0]?.status).toBe('error');
  });
});

describe('a daemon a run leaves', () => {
  it('cannot turn the removal of its folder onto the data dir', { timeout: 90_000 }, async () => {
    // A server of its own: on a server without the fix this test deletes its data dir.
    const server = await startServer();
    const client = await clientSide();
    try {
      const key = await server.key('alice');
      const pushed = await client.push(server, key);
      const cmd = `
set -e
DATA=$(dirname "$(dirname "$(dirname "$HOME")")")
mkdir "$HOME/x"; cd "$HOME/x"
for i in $(seq 1 2000); do : > d$i; done
: > cas; : > signing; : > remote.db
cat > "$HOME/d.py" <<'PY'
${fixture('swap-on-open.py')}
PY
setsid python3 "$HOME/d.py" "$HOME" "$DATA" </dev/null >/dev/null 2>&1 &
sleep 0.5; echo planted`;
      const run = await call(server, '/execute', {
        key,
        body: executeBody(pushed, 'rye/bash', { command: cmd }),
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const name of ['cas', 'signing', 'remote.db'])
        expect(existsSync(join(server.dataDir, name)), name).toBe(true);
      expect(run.json.result.data.stdout).toContain('planted');
      expect(readdirSync(join(server.dataDir, 'signing'))).toContain('private_key.pem');
      const again = await call(server, '/execute', {
        key,
        body: executeBody(pushed, 'rye/bash', { command: 'echo still here' }),
      });
      expect(again.json.result.data.stdout).toBe('still here\n');
      expect(await runsLeft(server.dataDir)).toEqual([]);
    } finally {
      await server.stop();
      await removeAll(server.dataDir, client.root);
    }
  });
});

describe('what a run leaves is killed when the run is stopped', () => {
  it('by --max-run-seconds', async () => {
    const server = await startServer({ args: ['--max-run-seconds', '2'] });
    const client = await clientSide();
    const marker = `rwtest-timeout-${process.pid}`;
    try {
      const key = await server.key('alice');
      const pushed = await client.push(server, key);
      const run = await call(server, '/execute', {
        key,
        body: executeBody(pushed, 'rye/bash', { command: `${orphanCommand(marker)}; sleep 60` }),
      });
      expect(run.json.result).toMatchObject({
        status: 'error',
        hint: expect.stringMatching(/--max-run-seconds/),
      });
      expect(await runsLeft(server.dataDir)).toEqual([]);
      await until(() => processesWith(marker).length === 0);
    } finally {
      killAll(marker);
      await server.stop();
      await removeAll(server.dataDir, client.root);
    }
  });

  it("by the server's SIGTERM", async () => {
    const server = await startServer();
    const client = await clientSide();
    const marker = `rwtest-sigterm-${process.pid}`;
    try {
      const key = await server.key('alice');
      const pushed = await client.push(server, key);
      const pending = call(server, '/execute', {
        key,
        body: executeBody(pushed, 'rye/bash', { command: `${orphanCommand(marker)}; sleep 60` }),
      });
      await until(() => processesWith(marker).length > 0);
      expect(await server.stop()).toBe(0);
      await pending.catch(() => undefined);
      expect(processesWith(marker)).toEqual([]);
      expect(readdirSync(join(server.dataDir, 'runs'))).toEqual([]);
    } finally {
      killAll(marker);
      await removeAll(server.dataDir, client.root);
    }
  });
});
