/**
 * Budgets and limits that hold against a hostile model (issue 28): a request the budget cannot pay
 * for is never sent, an unknown tier fails before any request, a refused fork writes nothing, a
 * resume verifies its whole chain, and async tool runs are their thread's children.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplayServer } from '@ryeos/threads/testing';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const READ = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const FAST = '<model tier="fast" provider="anthropic"/>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });

/** A subprocess tool that records its pid, then sleeps: a run that outlives its thread shows. */
const SLEEPER_TOOL = `export const __version__ = '1.0.0';
export const __executor_id__ = 'rye/core/runtimes/node/node';
export const __category__ = 'acme';
export const __tool_description__ = 'Record the pid, then sleep';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: { tag: { type: 'string' }, ms: { type: 'integer' } },
  required: ['tag'],
};
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
let raw = '';
for await (const chunk of process.stdin) raw += chunk;
const params = JSON.parse(raw || '{}');
const project = process.argv[process.argv.indexOf('--project-path') + 1];
mkdirSync(join(project, 'sleepers'), { recursive: true });
writeFileSync(join(project, 'sleepers', params.tag + '.pid'), String(process.pid));
await new Promise((resolve) => setTimeout(resolve, params.ms ?? 60000));
console.log(JSON.stringify({ success: true, tag: params.tag }));
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
  await fx.write('.ai/tools/acme/sleeper.mjs', SLEEPER_TOOL);
  await fx.sign('tool:acme/sleeper');
});

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids the sleeper runs recorded. */
function sleeperPids(): number[] {
  const dir = join(fixture().project, 'sleepers');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => Number(readFileSync(join(dir, name), 'utf8')));
}

const SLEEPER_CAP = '<permissions><execute><tool>acme.sleeper</tool></execute></permissions>';
const asyncSleep = (tag: string) => ({
  name: 'rye_execute',
  input: { item_id: 'tool:acme/sleeper', parameters: { tag, ms: 60_000 }, async: true },
});

/** The tool runs a thread started (its children in the registry), once every one has ended. */
async function endedToolRuns(parentId: string) {
  const opened = await store();
  try {
    const rows = async () =>
      (await opened.registry.listChildren(parentId)).filter((row) => row.directive.startsWith('tool/'));
    await until(async () => (await rows()).every((row) => row.status !== 'running'));
    return await rows();
  } finally {
    opened.close();
  }
}

describe('async tool runs started by a thread are its children', () => {
  it('they count against spawns, and stop (their processes killed) when the thread fails', async () => {
    const fx = fixture();
    await addDirective('fanout', `${FAST}<limits spawns="2"/>${SLEEPER_CAP}`);
    const server = await fx.serve({
      turns: [
        { tool_calls: Array.from({ length: 10 }, (_, i) => asyncSleep(`s${i}`)) },
        // The second answer waits until the runs are under way, then fails the thread.
        { error: { status: 400, type: 'invalid_request_error', message: 'bad request' }, delay_ms: 2000 },
      ],
    });
    const result = await fx.rye.execute({ item_id: 'directive:acme/fanout', thread: 'fork' });
    expect(result).toMatchObject({ status: 'error' });
    const refusals = JSON.stringify(server.requests[1]!.body).match(/Spawn limit exceeded/g) ?? [];
    expect(refusals).toHaveLength(8);
    const runs = await endedToolRuns(String(result.thread_id));
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(run.status).toBe('cancelled');
      expect(JSON.stringify(run.result)).toContain(`ended (error)`);
    }
    await until(() => sleeperPids().every((pid) => !alive(pid)), 10_000);
  }, 60_000);

  it('they are cancelled with their thread', async () => {
    const fx = fixture();
    await addDirective('held', `${FAST}${SLEEPER_CAP}`);
    await fx.serve({
      turns: [{ tool_calls: [asyncSleep('c')] }, { tool_calls: [returnCall('late')], delay_ms: 30_000 }],
    });
    const running = fx.rye.execute({ item_id: 'directive:acme/held', thread: 'fork' });
    await until(() => sleeperPids().length === 1);
    const opened = await store();
    const parent = (await opened.registry.list({ limit: 10 })).find((row) => row.directive === 'acme/held')!;
    opened.close();
    const { cancelThread } = await import('@ryeos/threads');
    expect(await cancelThread(fx.project, parent.thread_id)).toMatchObject({ success: true });
    expect(await running).toMatchObject({ thread_status: 'cancelled' });
    const [run] = await endedToolRuns(parent.thread_id);
    expect(run).toMatchObject({ status: 'cancelled' });
    await until(() => sleeperPids().every((pid) => !alive(pid)), 10_000);
  }, 60_000);

  it("they are bounded by their thread's remaining duration", async () => {
    const fx = fixture();
    await addDirective('brief', `${FAST}<limits duration_seconds="4"/>${SLEEPER_CAP}`);
    await fx.serve({ turns: [{ tool_calls: [asyncSleep('d')] }, { tool_calls: [returnCall('done')] }] });
    const result = await fx.rye.execute({ item_id: 'directive:acme/brief', thread: 'fork' });
    expect(result).toMatchObject({ status: 'success' });
    await until(() => sleeperPids().length === 1);
    const [run] = await endedToolRuns(String(result.thread_id));
    expect(run).toMatchObject({ status: 'cancelled' });
    expect(JSON.stringify(run!.result)).toContain('duration limit');
    await until(() => sleeperPids().every((pid) => !alive(pid)), 10_000);
  }, 60_000);
});

async function addDirective(name: string, metadata: string, extra: Parameters<typeof directive>[1] = {}) {
  const fx = fixture();
  await fx.write(`.ai/directives/acme/${name}.md`, directive(name, { metadata, outputs: OUTPUTS, ...extra }));
  await fx.sign(`directive:acme/${name}`);
}

async function store() {
  const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
  return openThreadStore(threadsStateRoot(fixture().project));
}

/** Thread folders under the project's thread state (not the database or its journal). */
function threadFolders(): string[] {
  const root = join(fixture().project, '.ai', 'state', 'threads');
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** claude-haiku-4-5 (the anthropic `fast` tier): USD per token. */
const HAIKU = { input: 1 / 1e6, output: 5 / 1e6 };

describe('spend never exceeds the budget, even within one response', () => {
  it("each request's max_tokens is what the remaining budget can pay for after its input", async () => {
    const fx = fixture();
    await addDirective('thrifty', `${FAST}<limits spend="0.05"/>${READ}`);
    // The scripted model answers as much as it likes: the cap is the request's, as a provider honours it.
    const server = await fx.serve({
      turns: [
        {
          tool_calls: [{ name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
          usage: { input_tokens: 2000, output_tokens: 1000 },
        },
        { tool_calls: [returnCall('done')], usage: { input_tokens: 2100, output_tokens: 100 } },
      ],
    });
    const result = await fx.rye.execute({ item_id: 'directive:acme/thrifty', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success', outputs: { answer: 'done' } });
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((r) => (r.body as { max_tokens: number }).max_tokens);
    // $0.05 can never pay for the model's 16384 output tokens ($0.08), whatever the input.
    expect(first).toBeLessThan(0.05 / HAIKU.output);
    expect(first).toBeGreaterThanOrEqual(256);
    // The second request pays for the first response ($0.007) and a larger input first.
    const spentFirst = 2000 * HAIKU.input + 1000 * HAIKU.output;
    expect(second).toBeLessThanOrEqual(Math.floor((0.05 - spentFirst - 2100 * HAIKU.input) / HAIKU.output));
    expect(second).toBeLessThan(first!);
  }, 30_000);

  it("a parent's cap counts what its children spent from its budget (the ledger), not only its own spend", async () => {
    const fx = fixture();
    await addDirective('kid', `<model tier="fast" provider="openai"/><limits spend="0.06"/>${READ}`);
    await addDirective(
      'mother',
      `${FAST}<limits spend="0.1"/><permissions><execute><directive>acme.kid</directive></execute></permissions>`,
    );
    // The child (gpt-4o-mini, $0.15 / $0.60 per million) spends $0.0498 of its parent's $0.10.
    const kids = await startReplayServer({
      turns: [
        { tool_calls: [returnCall('kid done')], usage: { input_tokens: 300_000, output_tokens: 8000 } },
      ],
    });
    fx.env.OPENAI_BASE_URL = `${kids.url}/v1`;
    fx.env.OPENAI_API_KEY = 'test-key';
    const server = await fx.serve({
      turns: [
        {
          tool_calls: [{ name: 'rye_execute', input: { item_id: 'directive:acme/kid', thread: 'fork' } }],
          usage: { input_tokens: 1000, output_tokens: 0 },
        },
        { tool_calls: [returnCall('done')] },
      ],
    });
    try {
      const result = await fx.rye.execute({ item_id: 'directive:acme/mother', thread: 'fork' });
      expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
      expect(kids.requests).toHaveLength(1);
      const second = (server.requests[1]!.body as { max_tokens: number }).max_tokens;
      // Left: $0.10 − $0.001 (own) − $0.0498 (the child's) = $0.0492, less the second input.
      expect(second).toBeLessThanOrEqual(Math.floor(0.0492 / HAIKU.output));
      expect(second).toBeGreaterThanOrEqual(256);
    } finally {
      await kids.close();
    }
  }, 60_000);

  it('a request the budget cannot pay for is not sent: the thread ends with the spend limit code', async () => {
    const fx = fixture();
    // 256 output tokens alone cost $0.00128 on this model.
    await addDirective('broke', `${FAST}<limits spend="0.001"/>${READ}`);
    const server = await fx.serve({ turns: [{ tool_calls: [returnCall('x')] }] });
    const result = await fx.rye.execute({ item_id: 'directive:acme/broke', thread: 'fork' });
    expect(result).toMatchObject({ status: 'error', limit_code: 'spend_exceeded', cost: { spend: 0 } });
    expect(String(result.error)).toMatch(/^Limit exceeded: spend_exceeded \(0\.00\d+\/0\.001\)$/);
    expect(server.requests).toHaveLength(0);
  }, 30_000);
});

describe('an unknown model tier', () => {
  it('fails with a config error before any request', async () => {
    await addDirective('typo', `<model tier="no-such-tier"/>${READ}`);
    const server = await fixture().serve({ turns: [{ tool_calls: [returnCall('x')] }] });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/typo', thread: 'fork' });
    expect(result).toMatchObject({ status: 'error', error_type: 'config' });
    expect(String(result.error)).toContain("tier 'no-such-tier'");
    expect(String(result.error)).toContain('Available tiers');
    expect(server.requests).toHaveLength(0);
  }, 30_000);
});

describe('input validation before anything exists', () => {
  it('a fork missing a required input leaves no thread folder and no registry row', async () => {
    await addDirective('needs', `${FAST}${READ}`, {
      inputs: '<input name="path" required="true">The file</input>',
    });
    const server = await fixture().serve({ turns: [{ tool_calls: [returnCall('x')] }] });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/needs', thread: 'fork' });
    expect(result).toMatchObject({ status: 'error' });
    expect(String(result.error)).toMatch(/path/);
    expect(result.thread_id).toBeUndefined();
    expect(server.requests).toHaveLength(0);
    expect(threadFolders()).toEqual([]);
    const opened = await store();
    try {
      expect(await opened.registry.list({ limit: 10 })).toEqual([]);
    } finally {
      opened.close();
    }
  }, 30_000);
});

describe('resume verifies the whole chain, every time', () => {
  it('after one resume, the first thread tampered or extended stops the next resume before any request', async () => {
    const fx = fixture();
    await addDirective('talk', `${FAST}${READ}`);
    const server = await fx.serve({
      turns: [
        { tool_calls: [returnCall('first answer')] },
        { tool_calls: [returnCall('second answer')] },
        { tool_calls: [returnCall('third answer')] },
      ],
    });
    const first = await fx.rye.execute({ item_id: 'directive:acme/talk', thread: 'fork' });
    expect(first.status).toBe('success');
    const id = String(first.thread_id);
    expect(await fx.rye.resumeThread(id, 'Again.')).toMatchObject({ success: true, resumed: true });
    expect(server.requests).toHaveLength(2);

    const { threadDir, threadsStateRoot } = await import('@ryeos/threads');
    const transcript = join(threadDir(threadsStateRoot(fx.project), id), 'transcript.jsonl');
    const original = await readFile(transcript, 'utf8');
    expect(original).toContain('first answer');

    await writeFile(transcript, original.replace('first answer', 'pwned answer'));
    const tampered = await fx.rye.resumeThread(id, 'Once more.');
    expect(tampered).toMatchObject({ success: false, resumed: false });
    expect(JSON.stringify(tampered)).toMatch(/do not verify/);

    await writeFile(transcript, original);
    await appendFile(transcript, `${original.trim().split('\n').at(-2)}\n`);
    const extended = await fx.rye.resumeThread(id, 'Once more.');
    expect(extended).toMatchObject({ success: false, resumed: false });
    expect(JSON.stringify(extended)).toMatch(/do not verify/);
    expect(server.requests).toHaveLength(2);

    // Untouched, the same resume goes ahead: the refusals were the records, not the request.
    await writeFile(transcript, original);
    expect(await fx.rye.resumeThread(id, 'Once more.')).toMatchObject({ success: true, resumed: true });
    expect(server.requests).toHaveLength(3);
  }, 60_000);
});
