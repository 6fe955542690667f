/**
 * What a thread sends a model after a handoff or an unreadable call stays bounded and valid
 * (issue 28 points 3, 4, 6), end to end through the facade against the replay server on 127.0.0.1.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const READ_CAP = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const SUMMARY = '<output name="summary" required="true">A summary</output>';
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const returnCall = { name: 'rye_directive_return', input: { summary: 'x' } };
const read = (path: string, extra: Record<string, unknown> = {}) => ({
  name: 'rye_file_system_read',
  input: { path, ...extra },
});

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
});

async function addDirective(name: string, body = 'Read and summarise.') {
  const fx = fixture();
  await fx.write(
    `.ai/directives/acme/${name}.md`,
    directive(name, { metadata: READ_CAP, outputs: SUMMARY, body }),
  );
  await fx.sign(`directive:acme/${name}`);
}

const fork = (name: string) =>
  fixture().rye.execute({ item_id: `directive:acme/${name}`, thread: 'fork', limit_overrides: { turns: 4 } });

/** Hands off after every turn, carrying at most `ceiling` tokens of the conversation. */
async function handoffEveryTurn(ceiling: number) {
  const fx = fixture();
  await fx.write(
    '.ai/config/agent/coordination.yaml',
    `coordination:\n  continuation:\n    trigger_threshold: 0.0001\n    resume_ceiling_tokens: ${ceiling}\n`,
  );
  await fx.sign('config:agent/coordination');
}

interface WireBlock {
  type: string;
  id?: string;
  tool_use_id?: string;
  input?: unknown;
}
type WireMessage = { role: string; content: string | WireBlock[] };

const blocks = (messages: WireMessage[]) =>
  messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));

describe('the handoff tail on the wire (points 3, 4)', () => {
  it('a result cut at an emoji reaches the provider without half a character', async () => {
    await handoffEveryTurn(60);
    for (const [file, prefix] of [
      ['even.txt', ''],
      ['odd.txt', 'ab'],
    ] as const) {
      await fixture().write(file, prefix + '😀'.repeat(3000));
    }
    await addDirective('emoji', `Read and summarise. ${'Be thorough. '.repeat(80)}`);
    const server = await fixture().serve({
      turns: [{ tool_calls: [read('even.txt'), read('odd.txt')] }, { tool_calls: [returnCall] }],
    });
    const result = await fork('emoji');
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    const sent = JSON.stringify((server.requests[1]!.body as { messages: unknown }).messages);
    expect(sent).toContain('did not fit the continuation');
    expect(LONE_SURROGATE.test(sent)).toBe(false);
    expect(sent).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
  }, 60_000);

  it('a huge call input and forty results are cut to the ceiling, every result with its call', async () => {
    await handoffEveryTurn(60);
    await addDirective('bounded', `Read and summarise. ${'Be thorough. '.repeat(80)}`);
    const server = await fixture().serve({
      turns: [
        { tool_calls: [read('notes.txt', { junk: 'J'.repeat(200_000) })] },
        { tool_calls: Array.from({ length: 40 }, () => read('notes.txt')) },
        { tool_calls: [returnCall] },
      ],
    });
    const result = await fork('bounded');
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    for (const request of server.requests.slice(1)) {
      const messages = (request.body as { messages: WireMessage[] }).messages;
      // The carried part: all but the last user message, which holds the continuation prompt.
      const carried = JSON.stringify(messages.slice(0, -1));
      expect(carried.length).toBeLessThan(1500);
      expect(carried).not.toContain('JJJJ');
      const uses = new Set<string>();
      for (const block of blocks(messages)) {
        if (block.type === 'tool_use') {
          expect(block.input).toBeTypeOf('object');
          uses.add(block.id!);
        }
        if (block.type === 'tool_result') expect(uses.has(block.tool_use_id!)).toBe(true);
      }
      const results = blocks(messages).filter((b) => b.type === 'tool_result').length;
      expect(results).toBe(uses.size);
    }
    const first = JSON.stringify(server.requests[1]!.body);
    expect(first).toContain('this input did not fit the continuation');
  }, 60_000);
});

describe('an overlong tool name in an unreadable call is not repeated (point 6)', () => {
  it('neither the next request nor the transcript carries it', async () => {
    const fx = fixture();
    const copied = await fx.rye.load({
      item_id: 'tool:rye/agent/providers/anthropic',
      destination: 'project',
    });
    expect(copied, JSON.stringify(copied)).toMatchObject({ status: 'success' });
    const provider = join(fx.project, '.ai', 'tools', 'rye', 'agent', 'providers', 'anthropic.yaml');
    await writeFile(
      provider,
      (await readFile(provider, 'utf8')).replace('  mode: native', '  mode: text_parsed'),
    );
    await fx.sign('tool:rye/agent/providers/anthropic');
    await addDirective('named');
    const name = 'N'.repeat(400_000);
    const server = await fx.serve({
      turns: [
        { text: `x <tool_use id="a1" name="${name}">not json</tool_use>` },
        { text: '<tool_use id="r1" name="rye_directive_return">{"summary": "fixed"}</tool_use>' },
      ],
    });
    const result = await fork('named');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'success',
      outputs: { summary: 'fixed' },
    });
    const second = JSON.stringify(server.requests[1]!.body);
    expect(second).toContain('could not be read');
    expect(second).not.toMatch(/N{1000}/);
    const transcript = join(
      fx.project,
      '.ai',
      'state',
      'threads',
      String(result.thread_id),
      'transcript.jsonl',
    );
    const text = await readFile(transcript, 'utf8');
    expect(text).not.toMatch(/N{1000}/);
    expect((await stat(transcript)).size).toBeLessThan(100_000);
  }, 60_000);
});
