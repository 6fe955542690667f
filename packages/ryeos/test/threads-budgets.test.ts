/**
 * Budgets and limits that hold against a hostile model (issue 28): a request the budget cannot pay
 * for is never sent, an unknown tier fails before any request, a refused fork writes nothing, a
 * resume verifies its whole chain, and async tool runs are their thread's children.
 */
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const READ = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const FAST = '<model tier="fast" provider="anthropic"/>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
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
      expect(opened.registry.list({ limit: 10 })).toEqual([]);
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
