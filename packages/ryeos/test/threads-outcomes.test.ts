/**
 * Threads that end the way their caller needs (issue 28, points 13–19): required outputs are
 * required, malformed text-mode calls reach the model, a handoff carries its tail and a sync
 * fork returns the chain's end, sinks never delay the result, attenuation is named.
 */

import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const READ = '<execute><tool>rye.file-system.read</tool></execute>';
const READ_CAP = `<permissions>${READ}</permissions>`;
const SUMMARY = '<output name="summary" required="true">A summary</output>';
const returnCall = (summary: string) => ({ name: 'rye_directive_return', input: { summary } });

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
});

async function addDirective(name: string, metadata: string, extra: Parameters<typeof directive>[1] = {}) {
  const fx = fixture();
  await fx.write(`.ai/directives/acme/${name}.md`, directive(name, { metadata, outputs: SUMMARY, ...extra }));
  await fx.sign(`directive:acme/${name}`);
}

async function fork(name: string, extra: Record<string, unknown> = {}) {
  return fixture().rye.execute({ item_id: `directive:acme/${name}`, thread: 'fork', ...extra });
}

/** A project copy of the shipped Anthropic provider, changed by `edit` and re-signed. */
async function editProvider(edit: (yaml: string) => string): Promise<void> {
  const fx = fixture();
  const copied = await fx.rye.load({ item_id: 'tool:rye/agent/providers/anthropic', destination: 'project' });
  expect(copied, JSON.stringify(copied)).toMatchObject({ status: 'success' });
  const path = join(fx.project, '.ai', 'tools', 'rye', 'agent', 'providers', 'anthropic.yaml');
  const text = await readFile(path, 'utf8');
  const changed = edit(text);
  expect(changed).not.toBe(text);
  await writeFile(path, changed);
  await fx.sign('tool:rye/agent/providers/anthropic');
}

const textMode = () => editProvider((yaml) => yaml.replace('  mode: native', '  mode: text_parsed'));

async function transcriptEvents(
  threadId: string,
): Promise<Array<{ event_type: string; payload: Record<string, unknown> }>> {
  const text = await readFile(
    join(fixture().project, '.ai', 'state', 'threads', threadId, 'transcript.jsonl'),
    'utf8',
  );
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('required outputs are required (13)', () => {
  it('a native thread that answers in prose after both nudges ends in error, naming the missing output', async () => {
    await addDirective('prose', READ_CAP);
    const server = await fixture().serve({
      turns: [{ text: 'All done.' }, { text: 'Really done.' }, { text: 'Nothing more to say.' }],
    });
    const result = await fork('prose');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'error',
      thread_status: 'error',
      error_code: 'required_outputs_missing',
      missing_outputs: ['summary'],
    });
    expect(String(result.error)).toContain('summary');
    expect(result.outputs).toBeUndefined();
    expect(server.requests).toHaveLength(3);
  }, 30_000);

  it('a text-mode thread is nudged too, and ends in error when it never returns', async () => {
    await textMode();
    await addDirective('prose', READ_CAP);
    const server = await fixture().serve({
      turns: [{ text: 'All done.' }, { text: 'Really done.' }, { text: 'Nothing more to say.' }],
    });
    const result = await fork('prose');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'error',
      error_code: 'required_outputs_missing',
    });
    expect(server.requests).toHaveLength(3);
    expect(JSON.stringify(server.requests[1]!.body)).toContain('You have not yet called directive_return');
  }, 30_000);

  it('a text-mode thread that returns after the nudge succeeds', async () => {
    await textMode();
    await addDirective('prose', READ_CAP);
    await fixture().serve({
      turns: [
        { text: 'All done.' },
        { text: '<tool_use id="r1" name="rye_directive_return">{"summary": "short"}</tool_use>' },
      ],
    });
    const result = await fork('prose');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'success',
      outputs: { summary: 'short' },
    });
  }, 30_000);
});

describe('malformed text-mode calls reach the model as tool errors (14)', () => {
  const returned = '<tool_use id="r1" name="rye_directive_return">{"summary": "fixed"}</tool_use>';

  it('a call with bad JSON comes back as a failed call with what the model wrote', async () => {
    await textMode();
    await addDirective('sloppy', READ_CAP);
    const server = await fixture().serve({
      turns: [
        { text: 'Reading. <tool_use id="a1" name="rye_file_system_read">{"path": notes.txt}</tool_use>' },
        { text: returned },
      ],
    });
    const result = await fork('sloppy');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'success',
      outputs: { summary: 'fixed' },
    });
    expect(server.requests).toHaveLength(2);
    const second = JSON.stringify(server.requests[1]!.body);
    expect(second).toContain('Your tool call could not be read');
    expect(second).toContain('not a JSON object');
    // The model sees its own call again, next to the error.
    expect(second).toContain('name=\\"rye_file_system_read\\"');
    expect(second).toContain('notes.txt}');
    const events = await transcriptEvents(String(result.thread_id));
    const failed = events.find((e) => e.event_type === 'tool_call_result' && e.payload.error);
    expect(String(failed?.payload.error)).toContain('could not be read');
  }, 30_000);

  it('an unterminated call and a non-object input are each answered; the thread does not end on them', async () => {
    await textMode();
    await addDirective('sloppy', READ_CAP);
    const server = await fixture().serve({
      turns: [
        { text: 'First <tool_use id="b1" name="rye_file_system_read">["notes.txt"]</tool_use>' },
        { text: 'Again <tool_use id="b2" name="rye_file_system_read">{"path": "notes.txt"' },
        { text: returned },
      ],
    });
    const result = await fork('sloppy');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'success',
      outputs: { summary: 'fixed' },
    });
    expect(server.requests).toHaveLength(3);
    expect(JSON.stringify(server.requests[1]!.body)).toContain('got an array');
    expect(JSON.stringify(server.requests[2]!.body)).toMatch(
      /unterminated (<|&lt;)tool_use> call at end of stream/,
    );
  }, 30_000);
});

describe('a handoff carries its tail, and a sync fork returns the chain’s end (15, 19)', () => {
  /** Hands off after every turn, carrying at most `ceiling` tokens of the conversation. */
  async function handoffEveryTurn(ceiling: number) {
    const fx = fixture();
    await fx.write(
      '.ai/config/agent/coordination.yaml',
      `coordination:\n  continuation:\n    trigger_threshold: 0.0001\n    resume_ceiling_tokens: ${ceiling}\n`,
    );
    await fx.sign('config:agent/coordination');
  }

  it('a conversation whose directive does not fit still carries its last tool work', async () => {
    await handoffEveryTurn(60);
    // A directive far longer than the ceiling: the tail cannot start at its user message.
    await addDirective('long', READ_CAP, {
      body: `Read notes.txt and summarise it. ${'Be thorough. '.repeat(80)}`,
    });
    const server = await fixture().serve({
      turns: [
        { tool_calls: [{ id: 'toolu_read', name: 'rye_file_system_read', input: { path: 'notes.txt' } }] },
        { tool_calls: [returnCall('alpha summarised')] },
      ],
    });
    const result = await fork('long');
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    const second = server.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    const text = JSON.stringify(second.messages);
    // The call and its result came along, behind a note that the start did not fit.
    expect(text).toContain('toolu_read');
    expect(text).toContain('alpha');
    expect(text).toContain('earlier messages did not fit');
    expect(text).toContain('the conversation above is its most recent part');
    expect(second.messages[0]!.role).toBe('user');
  }, 30_000);

  it('the sync fork returns the last thread’s status, outputs and the chain’s total cost and ids', async () => {
    await handoffEveryTurn(16_000);
    await addDirective('chained', READ_CAP);
    await fixture().serve({
      turns: [
        {
          tool_calls: [{ name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
          usage: { input_tokens: 100, output_tokens: 10 },
        },
        {
          tool_calls: [{ name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
          usage: { input_tokens: 200, output_tokens: 20 },
        },
        { tool_calls: [returnCall('chain done')], usage: { input_tokens: 300, output_tokens: 30 } },
      ],
    });
    const result = await fork('chained');
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'success',
      thread_status: 'completed',
      outputs: { summary: 'chain done' },
      cost: { turns: 3, input_tokens: 600, output_tokens: 60 },
    });
    const ids = result.chain_thread_ids as string[];
    expect(ids).toHaveLength(3);
    expect(ids[0]).toBe(result.thread_id);
    expect(result.final_thread_id).toBe(ids[2]);
    const records = await Promise.all(
      ids.map(async (id) =>
        JSON.parse(
          await readFile(join(fixture().project, '.ai', 'state', 'threads', id, 'thread.json'), 'utf8'),
        ),
      ),
    );
    expect(records.map((r) => r.status)).toEqual(['continued', 'continued', 'completed']);
  }, 30_000);
});

describe('attenuation is said out loud (18)', () => {
  it("a child's grants its parent lacks are named in its result, its transcript and tail", async () => {
    const fx = fixture();
    await addDirective(
      'child',
      '<permissions><execute><tool>rye.file-system.read</tool><tool>example.*</tool></execute></permissions>',
    );
    await addDirective(
      'parent',
      '<permissions><execute><tool>rye.file-system.read</tool><directive>acme.child</directive></execute></permissions>',
    );
    const server = await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_execute', input: { item_id: 'directive:acme/child', thread: 'fork' } }] },
        { tool_calls: [returnCall('child done')] },
        { tool_calls: [returnCall('parent done')] },
      ],
    });
    const parent = await fork('parent');
    expect(parent, JSON.stringify(parent)).toMatchObject({
      status: 'success',
      outputs: { summary: 'parent done' },
    });
    // The child's result, as its parent's tool got it, names the grant it lost.
    const third = JSON.stringify(server.requests[2]!.body);
    expect(third).toContain('attenuated_capabilities');
    expect(third).toMatch(/example\.\*/);
    const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
    const store = openThreadStore(threadsStateRoot(fx.project));
    let child: string;
    try {
      child = (await store.registry.listChildren(String(parent.thread_id)))[0]!.thread_id;
    } finally {
      store.close();
    }
    const events = await transcriptEvents(child);
    const event = events.find((e) => e.event_type === 'capabilities_attenuated');
    expect(event?.payload).toMatchObject({ parent_thread_id: parent.thread_id });
    expect(((event?.payload.grants ?? []) as string[]).some((grant) => grant.endsWith('example.*'))).toBe(
      true,
    );
    const { describeEvent } = await import('../src/commands/threads-tail.js');
    expect(describeEvent(event!, false)).toMatch(/capabilities attenuated by parent .*example\.\*/);
  }, 30_000);
});

describe('sinks never delay the result (16)', () => {
  /** The payload of the first client (masked) WebSocket frame in `bytes`, or undefined until it is whole. */
  function firstFrame(bytes: Buffer): string | undefined {
    if (bytes.length < 2) return undefined;
    let length = bytes[1]! & 0x7f;
    let at = 2;
    if (length === 126) {
      if (bytes.length < 4) return undefined;
      length = bytes.readUInt16BE(2);
      at = 4;
    } else if (length === 127) {
      if (bytes.length < 10) return undefined;
      length = Number(bytes.readBigUInt64BE(2));
      at = 10;
    }
    if (bytes.length < at + 4 + length) return undefined;
    const mask = bytes.subarray(at, at + 4);
    const payload = Buffer.from(bytes.subarray(at + 4, at + 4 + length));
    for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i % 4]!;
    return payload.toString('utf8');
  }

  it('a websocket sink whose server holds the handshake is still pending when the result arrives', async () => {
    // A UI that accepts TCP and does not answer: the test answers its handshake only once the
    // thread's result is in. Had the thread waited for the sink, the sink would have given up.
    let socket: Socket | undefined;
    let request = '';
    let afterHandshake = Buffer.alloc(0);
    let answered = false;
    const silent = createServer((accepted) => {
      socket = accepted;
      accepted.on('error', () => undefined);
      accepted.on('data', (chunk: Buffer) => {
        if (answered) afterHandshake = Buffer.concat([afterHandshake, chunk]);
        else request += chunk.toString('latin1');
      });
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      await editProvider((yaml) =>
        yaml.replace(
          '  stream: {enabled: true, mode: inline}',
          `  stream: {enabled: true, mode: inline, sinks: [{type: websocket, url: "ws://127.0.0.1:${port}/events"}]}`,
        ),
      );
      await addDirective('watched', READ_CAP);
      await fixture().serve({ turns: [{ tool_calls: [returnCall('seen')] }] });
      const result = await fork('watched');
      expect(result, JSON.stringify(result)).toMatchObject({
        status: 'success',
        outputs: { summary: 'seen' },
      });
      await until(() => /\r\n\r\n/.test(request));
      const key = /sec-websocket-key:\s*(\S+)/i.exec(request)?.[1] ?? '';
      const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      answered = true;
      socket!.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      );
      // The sink was still there to take the answer: the thread's events arrive after its result.
      await until(() => firstFrame(afterHandshake) !== undefined);
      expect(JSON.parse(firstFrame(afterHandshake)!)).toMatchObject({ thread_id: result.thread_id, turn: 1 });
    } finally {
      socket?.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 30_000);
});

/** Polls `check` until it holds; a failure to arrive at all fails the test after a generous wait. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
