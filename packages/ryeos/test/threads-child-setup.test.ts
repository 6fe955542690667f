/**
 * A detached parent thread setting up its children (issue 30): the runner that runs the parent
 * does not parse tool metadata the executor's cache holds, it keeps a runner ready for its first
 * child, and a config file tampered with after its caller parsed it still fails the child's setup.
 * Runners
 * are started through a wrapper (`RYE_THREAD_RUNNER`) that logs each package the process loads
 * to its `spawn.log`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReplayServer } from '@ryeos/threads/testing';
import { startReplayServer } from '@ryeos/threads/testing';
import { describe, expect, it } from 'vitest';
import { threadRunnerPath } from '../src/execute/detach.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });
const startKid = {
  name: 'rye_execute',
  input: { item_id: 'directive:acme/kid', thread: 'fork', async: true },
};

/** Logs every package the runner loads (ESM or CommonJS), then runs the real runner. */
const wrapper = (runner: string) => `import Module, { isBuiltin, register } from 'node:module';
const hook = ${JSON.stringify(`import { isBuiltin } from 'node:module';
export async function resolve(s, c, next) {
  if (!/^[./]|^file:/.test(s) && !isBuiltin(s)) process.stderr.write('PKG ' + s + '\\n');
  return next(s, c);
}`)};
register('data:text/javascript,' + encodeURIComponent(hook));
const load = Module._load;
Module._load = function (request, ...rest) {
  if (!/^[./]|^file:/.test(request) && !isBuiltin(request)) process.stderr.write('PKG ' + request + '\\n');
  return load.call(this, request, ...rest);
};
await import(${JSON.stringify(runner)});
`;

const fixture = useThreadFixture(async (fx) => {
  // The kid's palette holds a JavaScript tool: parsing its metadata would load @babel/parser.
  await fx.write(
    '.ai/directives/acme/kid.md',
    directive('kid', {
      metadata:
        '<model tier="fast" provider="openai"/><permissions><execute><tool>rye.file-system.read</tool></execute></permissions>',
      outputs: OUTPUTS,
    }),
  );
  await fx.write(
    '.ai/directives/acme/parent.md',
    directive('parent', {
      metadata:
        '<model tier="fast" provider="anthropic"/><permissions><execute><directive>acme.kid</directive><tool>rye.file-system.read</tool></execute></permissions>',
      outputs: OUTPUTS,
    }),
  );
  await fx.sign('directive:acme/kid');
  await fx.sign('directive:acme/parent');
  fx.env.RYE_THREAD_RUNNER = await fx.write('runner-wrapper.mjs', wrapper(threadRunnerPath()));
});

/** The kids' server (OpenAI format); the fixture's own serves the parents. */
async function serveKids(turns: Parameters<typeof startReplayServer>[0]['turns']): Promise<ReplayServer> {
  const server = await startReplayServer({ turns });
  const fx = fixture();
  fx.env.OPENAI_BASE_URL = `${server.url}/v1`;
  fx.env.OPENAI_API_KEY = 'test-key';
  fx.refresh();
  return server;
}

async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A process's start in clock ticks since boot (`/proc/<pid>/stat`, field 22). */
function startTicks(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** When a process started (epoch ms, to a tick), measured against this process's own start. */
function processStartedAt(pid: number): number {
  const tickMs = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return performance.timeOrigin + (startTicks(pid) - startTicks('self')) * tickMs;
}

/** Starts the parent detached; resolves with its thread id. */
async function startParent(): Promise<string> {
  const reply = await fixture().rye.execute({
    item_id: 'directive:acme/parent',
    thread: 'fork',
    async: true,
  });
  expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', async: true });
  return String(reply.thread_id);
}

/** The pid of the process the parent's kid runs in. */
async function kidPid(parent: string): Promise<number> {
  const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
  const store = openThreadStore(threadsStateRoot(fixture().project));
  try {
    const [kid] = await store.registry.listChildren(parent);
    expect(kid?.pid, 'the kid runs in a process of its own').toBeTypeOf('number');
    return kid!.pid!;
  } finally {
    await store.close();
  }
}

/** Waits for the parent and its kid to complete; resolves with the kid's id. */
async function finished(parent: string): Promise<string> {
  const { project } = fixture();
  const { openThreadStore, threadsStateRoot, waitThreads } = await import('@ryeos/threads');
  const done = await waitThreads(project, [parent], { timeoutSeconds: 60 });
  expect(done.results[parent]?.status, JSON.stringify(done)).toBe('completed');
  const store = openThreadStore(threadsStateRoot(project));
  try {
    const [kid] = await store.registry.listChildren(parent);
    expect(kid, 'the parent started a kid').toBeDefined();
    const kidDone = await waitThreads(project, [kid!.thread_id], { timeoutSeconds: 60 });
    expect(kidDone.results[kid!.thread_id]?.status, JSON.stringify(kidDone)).toBe('completed');
    return kid!.thread_id;
  } finally {
    await store.close();
  }
}

function spawnLog(threadId: string): string {
  return readFileSync(join(fixture().project, '.ai', 'state', 'threads', threadId, 'spawn.log'), 'utf8');
}

describe("a detached parent's children", () => {
  it("are set up without parsing again the tool metadata the executor's cache holds", async () => {
    const kids = await serveKids([{ tool_calls: [returnCall('kid done')] }]);
    const parents = await fixture().serve({
      // Its second answer waits: what the runner loaded until then is the parent's start and the
      // kid's setup (its own end writes transcripts, which may load more).
      turns: [{ tool_calls: [startKid] }, { delay_ms: 1000, tool_calls: [returnCall('started')] }],
    });
    const parent = await startParent();
    await until(() => parents.requests.length === 2);
    const log = spawnLog(parent);
    await finished(parent);
    expect(kids.requests).toHaveLength(1);
    const loaded = log
      .split('\n')
      .filter((line) => line.startsWith('PKG '))
      .map((line) => line.slice(4));
    // The wrapper did log: the kid's directive was parsed (a project item: its XML parser).
    expect(loaded).toContain('saxes');
    // The kid's palette tool (rye/file-system/read, JavaScript): its metadata came from the
    // system bundle's signed index, through the executor's cache, not from parsing it again.
    expect(loaded, '@babel/parser loaded by the parent runner').not.toContain('@babel/parser');
    await kids.close();
  }, 90_000);

  it("run in a runner the parent's process started before the model asked for them", async () => {
    // The kid's answer waits, so that its process is still there to be looked at.
    const kids = await serveKids([{ delay_ms: 1000, tool_calls: [returnCall('kid done')] }]);
    const parents = await fixture().serve({
      // The parent's model takes a while to answer, as a model does.
      turns: [{ delay_ms: 1500, tool_calls: [startKid] }, { tool_calls: [returnCall('started')] }],
    });
    const parent = await startParent();
    await until(() => kids.requests.length === 1);
    const pid = await kidPid(parent);
    const started = processStartedAt(pid);
    const asked = parents.requests[0]!.finalSentAt!;
    // Started while the parent's model was still thinking, not once it asked (to /proc's 10 ms).
    expect(asked - started, `the kid's runner started ${asked - started} ms before the call`).toBeGreaterThan(
      500,
    );
    await finished(parent);
    await kids.close();
  }, 90_000);

  it('fails closed when a config file is tampered with between two children', async () => {
    const fx = fixture();
    const config = await fx.write(
      '.ai/config/agent/coordination.yaml',
      'coordination:\n  continuation:\n    max_chain: 3\n',
    );
    await fx.sign('config:agent/coordination');
    const kids = await serveKids([
      { tool_calls: [returnCall('kid done')] },
      { tool_calls: [returnCall('never')] },
    ]);
    const parents = await fixture().serve({
      turns: [
        { tool_calls: [startKid] },
        // Time for the file to change before the parent asks for its second kid.
        { delay_ms: 1500, tool_calls: [startKid] },
        { tool_calls: [returnCall('done')] },
      ],
    });
    const parent = await startParent();
    await until(() => kids.requests.length === 1);
    // Signed when the caller parsed it (and handed the parse over); tampered with now.
    const { readFile, writeFile } = await import('node:fs/promises');
    await writeFile(config, (await readFile(config, 'utf8')).replace('max_chain: 3', 'max_chain: 300'));
    await until(() => parents.requests.length === 3);
    const answered = JSON.stringify(parents.requests[2]!.body);
    expect(answered).toContain('integrity');
    expect(answered).toContain('coordination.yaml');
    await finished(parent);
    expect(kids.requests).toHaveLength(1);
    await kids.close();
  }, 90_000);

  it('a long-lived host running a parent that may start children has a runner ready for its first', async () => {
    const kids = await serveKids([{ delay_ms: 1000, tool_calls: [returnCall('kid done')] }]);
    const parents = await fixture().serve({
      turns: [{ delay_ms: 1500, tool_calls: [startKid] }, { tool_calls: [returnCall('started')] }],
    });
    // In this process, the host's first async fork: no runner was kept for one before.
    const running = fixture().rye.execute({ item_id: 'directive:acme/parent', thread: 'fork' });
    await until(() => kids.requests.length === 1);
    const result = await running;
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    const pid = await kidPid(String(result.thread_id));
    const started = processStartedAt(pid);
    const asked = parents.requests[0]!.finalSentAt!;
    expect(asked - started, `the kid's runner started ${asked - started} ms before the call`).toBeGreaterThan(
      500,
    );
    await finished(String(result.thread_id));
    await kids.close();
  }, 90_000);
});
