/**
 * Two executions at once, for two users, cannot see each other's files or secrets: each has its
 * own temp spaces, HOME and TMPDIR, and an environment built from a short allowlist plus its own
 * user's secrets, never the server's environment.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

// Leaves a file in its HOME, TMPDIR and project, waits for the other run to do the same, then
// reports what it can see.
const PEEK = nodeTool(
  'acme',
  `const { writeFileSync, readdirSync } = await import('node:fs');
const { join } = await import('node:path');
for (const dir of [process.env.HOME, process.env.TMPDIR, process.cwd()]) writeFileSync(join(dir, 'mine-' + params.tag), params.tag);
await new Promise((resolve) => setTimeout(resolve, 1500));
console.log(JSON.stringify({
  success: true,
  env: process.env,
  cwd: process.cwd(),
  home: readdirSync(process.env.HOME),
  tmp: readdirSync(process.env.TMPDIR),
  project: readdirSync(process.cwd()),
}));`,
);

let server: RemoteServer;
const sides: ClientSide[] = [];

beforeAll(async () => {
  server = await startServer({ env: { RYE_REMOTE_CANARY: 'server-process-only' } });
});
afterAll(async () => {
  await server.stop();
  await removeAll(server.dataDir, ...sides.map((s) => s.root));
});

async function userWithPeek(user: string) {
  const key = await server.key(user);
  const secret = await server.cli(
    ['secrets', 'set', '--user', user, 'SECRET_TOKEN'],
    `${user}-secret-value\n`,
  );
  expect(secret.code, secret.stderr).toBe(0);
  const side = await clientSide();
  sides.push(side);
  await side.write('.ai/tools/acme/peek.js', PEEK);
  await side.sign('tool:acme/peek');
  return { key, pushed: await side.push(server, key) };
}

describe('concurrent remote executions', () => {
  it("see only their own files and their own user's secrets", async () => {
    const users = await Promise.all([userWithPeek('alice'), userWithPeek('bob')]);
    const answers = await Promise.all(
      users.map(({ key, pushed }, index) =>
        call(server, '/execute', {
          key,
          body: {
            project_manifest_hash: pushed.project,
            user_manifest_hash: pushed.user,
            system_version: SYSTEM_VERSION,
            item_type: 'tool',
            item_id: 'acme/peek',
            thread: 'inline',
            parameters: { tag: ['alice', 'bob'][index] },
          },
        }),
      ),
    );
    const seen = answers.map((answer) => {
      expect(answer.json.status, JSON.stringify(answer.json)).toBe('success');
      return answer.json.result.data as {
        env: Record<string, string>;
        cwd: string;
        home: string[];
        tmp: string[];
        project: string[];
      };
    });
    const [alice, bob] = seen as [(typeof seen)[0], (typeof seen)[0]];
    expect(alice.env.SECRET_TOKEN).toBe('alice-secret-value');
    expect(bob.env.SECRET_TOKEN).toBe('bob-secret-value');
    expect(JSON.stringify(alice)).not.toContain('bob-secret-value');
    expect(JSON.stringify(bob)).not.toContain('alice-secret-value');
    for (const run of seen) {
      // Not the server's environment: its variables stay out, HOME and TMPDIR are the run's own.
      expect(run.env.RYE_REMOTE_CANARY).toBeUndefined();
      expect(run.env.RYE_REMOTE_HOME).toBeUndefined();
      expect(Object.keys(run.env).filter((name) => name.startsWith('RYE_SIGNING'))).toEqual([]);
      expect(run.env.HOME!.startsWith(join(server.dataDir, 'runs'))).toBe(true);
    }
    expect(alice.env.HOME).not.toBe(bob.env.HOME);
    expect(alice.cwd).not.toBe(bob.cwd);
    for (const [run, tag] of [
      [alice, 'alice'],
      [bob, 'bob'],
    ] as const) {
      expect(run.home).toEqual([`mine-${tag}`]);
      expect(run.tmp).toEqual([`mine-${tag}`]);
      expect(run.project).toContain(`mine-${tag}`);
      expect(run.project.filter((name) => name.startsWith('mine-'))).toEqual([`mine-${tag}`]);
    }
    // Both temp spaces are gone.
    expect(await runsLeft(server.dataDir)).toEqual([]);
  });

  it('fifty at once all succeed', async () => {
    const key = await server.key('carol');
    const side = await clientSide();
    sides.push(side);
    await side.write(
      '.ai/tools/acme/echo.js',
      nodeTool('acme', 'console.log(JSON.stringify({ success: true, n: params.n }));'),
    );
    await side.sign('tool:acme/echo');
    const pushed = await side.push(server, key);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        call(server, '/execute', {
          key,
          body: {
            project_manifest_hash: pushed.project,
            user_manifest_hash: pushed.user,
            system_version: SYSTEM_VERSION,
            item_type: 'tool',
            item_id: 'acme/echo',
            thread: 'inline',
            parameters: { n },
          },
        }),
      ),
    );
    expect(answers.map((a) => a.json.result?.data?.n)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    const threads = await call(server, '/threads?limit=100', { key });
    expect(threads.json.threads).toHaveLength(50);
    expect(new Set(threads.json.threads.map((t: { status: string }) => t.status))).toEqual(
      new Set(['completed']),
    );
  }, 120_000);
});
