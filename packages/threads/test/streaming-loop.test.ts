/**
 * Streaming inline tool execution at the loop (issue 14, seed 002): the replay server streams at
 * a fixed rate on 127.0.0.1, the Anthropic adapter reads it, and every call goes through a real
 * dispatch function that records when it started and ended. The transcript is a real signed
 * `transcript.jsonl`; what the runner sent the model is read back from the server's requests.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrimaryCall } from '../src/host.js';
import { reconstructMessages, resumeMessages } from '../src/persistence/reconstruct.js';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import { readTranscript } from '../src/persistence/transcript-read.js';
import { createAnthropicModel, toAnthropicMessages } from '../src/provider/anthropic.js';
import { createOpenAIModel } from '../src/provider/openai.js';
import type { ChatMessage } from '../src/provider/types.js';
import type { LoopContext } from '../src/runner/loop.js';
import { runLoop } from '../src/runner/loop.js';
import type { Palette, PaletteEntry } from '../src/runner/palette.js';
import { DIRECTIVE_RETURN_ID } from '../src/runner/palette.js';
import { ResultGuard } from '../src/runner/result-guard.js';
import { TextToolParser } from '../src/streaming/text-parser.js';
import { type ReplayScript, type ReplayServer, startReplayServer } from '../src/testing.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await dirs.cleanup();
});

function tool(name: string, itemId: string): PaletteEntry {
  return {
    name,
    description: name,
    schema: { type: 'object', properties: {} },
    kind: 'tool',
    itemId,
    primary: 'execute',
  };
}

const ENTRIES: PaletteEntry[] = [
  tool('acme_mark', 'acme/mark'),
  tool('acme_other', 'acme/other'),
  tool('acme_forbidden', 'acme/forbidden'),
  { ...tool('rye_directive_return', DIRECTIVE_RETURN_ID), kind: 'directive_return' },
];
const PALETTE: Palette = { entries: ENTRIES, byName: new Map(ENTRIES.map((e) => [e.name, e])), warnings: [] };

interface Run {
  item: string;
  tag: unknown;
  started: number;
  ended: number;
}

/** A dispatch that runs a "tool": sleeps `ms` (default 0) and records when. */
function recordingDispatch(runs: Run[]) {
  return async (call: PrimaryCall) => {
    const item = String(call.args.item_id).replace(/^tool:/, '');
    const params = (call.args.parameters ?? {}) as { tag?: unknown; ms?: number };
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, params.ms ?? 0));
    runs.push({ item, tag: params.tag, started, ended: Date.now() });
    return { status: 'success', type: 'tool', item_id: `tool:${item}`, data: { tag: params.tag } };
  };
}

const mark = (tag: string, ms = 0, extra: Record<string, unknown> = {}) => ({
  name: 'acme_mark',
  id: `toolu_${tag}`,
  input: { tag, ms },
  ...extra,
});
const done = { name: 'rye_directive_return', id: 'toolu_done', input: { answer: 'ok' } };

async function setUp(script: ReplayScript, options: Partial<LoopContext> & { openai?: boolean } = {}) {
  server = await startReplayServer(script);
  const dir = await dirs.make('rye-stream-');
  const { signer } = testKey();
  const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), 'acme/t/t-1', signer);
  const runs: Run[] = [];
  const config = {
    providerId: 'replay',
    modelId: 'replay-model',
    headers: {},
    timeoutMs: 5000,
    stream: true,
  };
  const model = options.openai
    ? createOpenAIModel({ ...config, url: `${server.url}/v1/chat/completions` })
    : createAnthropicModel({ ...config, url: `${server.url}/v1/messages` });
  const messages: ChatMessage[] = [{ role: 'user', content: 'Go.' }];
  const ctx: LoopContext = {
    threadId: 'acme/t/t-1',
    directiveId: 'acme/t',
    model,
    system: 'You are a test.',
    messages,
    palette: PALETTE,
    outputs: [{ name: 'answer', required: true }],
    limits: { turns: 10, tokens: 1e9, spend: 10, duration_seconds: 60 },
    maxTokens: 1000,
    contextWindow: 200_000,
    contextThreshold: 0.9,
    nativeTools: true,
    log: {
      emit: (type, payload) => writer.write(type, payload),
      checkpoint: (turn) => void writer.checkpoint(turn),
    },
    hooks: { control: async (event) => (event === 'error' ? { action: 'retry' } : null) },
    permission: {
      check: (_call, entry) =>
        entry?.itemId === 'acme/forbidden' ? { error: 'Permission denied: acme/forbidden' } : undefined,
    },
    dispatch: recordingDispatch(runs),
    guard: new ResultGuard(join(dir, 'artifacts')),
    checkLimits: () => undefined,
    classifyError: () =>
      ({ category: 'transient', retryable: true, retry_policy: { type: 'none' } }) as never,
    retryDelay: () => 0,
    isCancelled: () => false,
    onSpend: () => undefined,
    onCostSnapshot: () => undefined,
    ...options,
  };
  const result = await runLoop(ctx);
  writer.close();
  const events = await readTranscript(join(dir, 'transcript.jsonl'));
  return { result, runs, events, messages, server };
}

function types(events: { event_type: string }[]): string[] {
  return events.map((e) => e.event_type).filter((t) => t !== 'checkpoint' && t !== 'cognition_out_delta');
}

describe('streaming inline tool execution', () => {
  it('starts a call while the model is still streaming: its result exists before the final event', async () => {
    const {
      runs,
      events,
      server: s,
    } = await setUp({
      turns: [
        { tool_calls: [mark('a')], text: 'Marking.', hold_before_final_ms: 800 },
        { tool_calls: [done] },
      ],
    });
    expect(runs).toHaveLength(1);
    const finalSent = s.requests[0]!.finalSentAt!;
    expect(finalSent).toBeGreaterThan(0);
    expect(runs[0]!.ended).toBeLessThan(finalSent);
    // Seed 002's order: the call starts and ends before the turn's full text is recorded (the
    // response's usage is on record as its stream ends).
    const turn1 = events.filter((e) => e.payload.turn === 1);
    expect(types(turn1)).toEqual([
      'cognition_in',
      'tool_call_start',
      'tool_call_result',
      'response_usage',
      'cognition_out',
    ]);
    expect(turn1.find((e) => e.event_type === 'cognition_out')!.payload).toMatchObject({
      text: 'Marking.',
      is_partial: false,
      tool_count: 1,
    });
    const deltas = turn1.filter((e) => e.event_type === 'cognition_out_delta');
    expect(deltas.map((d) => d.payload.text).join('')).toBe('Marking.');
  }, 20_000);

  it('runs five calls to one item once each, in stream order, one after another', async () => {
    const tags = ['a', 'b', 'c', 'd', 'e'];
    const { runs, result } = await setUp({
      turns: [{ tool_calls: tags.map((t) => mark(t, 40)), chunk_delay_ms: 5 }, { tool_calls: [done] }],
    });
    expect(result.result.success).toBe(true);
    expect(runs.map((r) => r.tag)).toEqual(tags);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.started).toBeGreaterThanOrEqual(runs[i - 1]!.ended);
  }, 20_000);

  it('runs calls to different items side by side', async () => {
    const { runs } = await setUp({
      turns: [
        {
          tool_calls: [mark('a', 400), { name: 'acme_other', id: 'toolu_o', input: { tag: 'o', ms: 400 } }],
        },
        { tool_calls: [done] },
      ],
    });
    const [a, o] = [runs.find((r) => r.item === 'acme/mark')!, runs.find((r) => r.item === 'acme/other')!];
    expect(a.started).toBeLessThan(o.ended);
    expect(o.started).toBeLessThan(a.ended);
  }, 20_000);

  it('a malformed or denied call does not stop the others; the model reads why', async () => {
    const { runs, server: s } = await setUp({
      turns: [
        {
          tool_calls: [
            mark('a'),
            { name: 'acme_mark', id: 'toolu_bad', raw_input: '{"tag": "broken' },
            { name: 'acme_forbidden', id: 'toolu_f', input: {} },
            mark('b'),
          ],
        },
        { tool_calls: [done] },
      ],
    });
    expect(runs.map((r) => r.tag)).toEqual(['a', 'b']);
    const second = JSON.stringify(s.requests[1]!.body);
    expect(second).toContain('were not valid JSON');
    expect(second).toContain('Permission denied: acme/forbidden');
  }, 20_000);

  it('a stream cut after two completed calls keeps their results; the retry does not run them again', async () => {
    // message_start, ping, then 4 frames per call (start, empty delta, input, stop): 12 frames
    // end inside the third call.
    const calls = [mark('a'), mark('b'), mark('c')];
    const {
      runs,
      events,
      messages,
      result,
      server: s,
    } = await setUp({
      turns: [
        { tool_calls: calls, chunk_size: 1000, disconnect_after_events: 12 },
        { tool_calls: [mark('c')] },
        { tool_calls: [done] },
      ],
    });
    expect(result.result).toMatchObject({ success: true, outputs: { answer: 'ok' } });
    expect(runs.map((r) => r.tag)).toEqual(['a', 'b', 'c']);
    // The retry carried the two results, and the third call never ran from the broken stream.
    const retry = JSON.stringify(s.requests[1]!.body);
    expect(retry).toContain('toolu_a');
    expect(retry).toContain('toolu_b');
    expect(retry).not.toContain('toolu_c');
    const partial = events.find((e) => e.event_type === 'cognition_out' && e.payload.is_partial === true);
    expect(partial?.payload).toMatchObject({ truncated: true, tool_count: 2, turn: 1 });
    expect(partial?.payload.error).toMatch(/ended before|connection/);

    // Reconstructing the interleaved transcript gives the very conversation the runner had.
    const rebuilt = reconstructMessages(events);
    expect(rebuilt).toEqual(messages);
    // ...which is what the model was sent before the last turn.
    const lastBody = s.requests.at(-1)!.body as { messages: unknown[] };
    expect(toAnthropicMessages(rebuilt).slice(0, lastBody.messages.length)).toEqual(lastBody.messages);
  }, 30_000);

  it('holds directive_return to the end of the turn, after the calls before it', async () => {
    const { runs, events, result } = await setUp({
      turns: [{ tool_calls: [done, mark('late', 300)] }],
    });
    expect(result.result).toMatchObject({ success: true, outputs: { answer: 'ok' } });
    expect(runs.map((r) => r.tag)).toEqual(['late']);
    const order = events
      .filter((e) => e.event_type === 'tool_call_result')
      .map((e) => String(e.payload.call_id));
    expect(order).toEqual(['toolu_late', 'toolu_done']);
  }, 20_000);

  it('batch mode runs the same calls only after the stream', async () => {
    const { runs, server: s } = await setUp(
      { turns: [{ tool_calls: [mark('a')], hold_before_final_ms: 500 }, { tool_calls: [done] }] },
      { streamMode: 'batch' },
    );
    expect(runs[0]!.started).toBeGreaterThanOrEqual(s.requests[0]!.finalSentAt!);
  }, 20_000);

  it('OpenAI: a call completes when the stream moves past it, and starts then', async () => {
    const { runs, server: s } = await setUp(
      {
        turns: [
          {
            tool_calls: [mark('a'), { ...mark('b'), text_before: '' }],
            chunk_delay_ms: 150,
            hold_before_final_ms: 600,
          },
          { tool_calls: [done] },
        ],
      },
      { openai: true },
    );
    expect(runs.map((r) => r.tag)).toEqual(['a', 'b']);
    // a completes when b's first delta arrives, long before the final event.
    expect(runs[0]!.ended).toBeLessThan(s.requests[0]!.finalSentAt!);
  }, 20_000);

  it('text mode: calls written in the text run during the stream; a malformed one is reported, the rest run', async () => {
    const text = [
      'First <tool_use id="t1" name="acme_mark">{"tag": "a"}</tool_use> then ',
      '<tool_use id="t2" name="acme_mark">{"tag": </tool_use> broken, then ',
      '{"type": "tool_use", "id": "t3", "name": "acme_mark", "input": {"tag": "b"}} and done.',
    ].join('');
    const {
      runs,
      events,
      result,
      server: s,
    } = await setUp(
      {
        turns: [
          { text, chunk_size: 7, chunk_delay_ms: 5, hold_before_final_ms: 400 },
          { text: '<tool_use name="rye_directive_return">{"answer": "ok"}</tool_use>' },
        ],
      },
      { textParser: () => new TextToolParser() },
    );
    expect(result.result).toMatchObject({ success: true, outputs: { answer: 'ok' } });
    expect(runs.map((r) => r.tag)).toEqual(['a', 'b']);
    expect(runs[1]!.ended).toBeLessThan(s.requests[0]!.finalSentAt!);
    // The model was not sent native tools, and reads the text without the call markup.
    expect((s.requests[0]!.body as { tools?: unknown[] }).tools ?? []).toEqual([]);
    const out = events.find((e) => e.event_type === 'cognition_out' && e.payload.turn === 1)!;
    expect(out.payload.text).toBe('First  then  broken, then  and done.');
    expect(events.some((e) => e.event_type === 'tool_parse_error')).toBe(true);
    // The next request carries the calls as text and their results as a user message.
    const next = s.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(next.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(String(next.messages[1]!.content)).toContain(
      '<tool_use id="t3" name="acme_mark">{"tag":"b"}</tool_use>',
    );
    expect(String(next.messages[2]!.content)).toContain('<tool_result id="t1">');
  }, 20_000);

  it('resuming after a broken stream: the conversation so far, then a note of how far it got', async () => {
    const { events } = await setUp({
      turns: [
        {
          text: 'Working on it, step one of many.',
          disconnect_after_events: 5,
          usage: { output_tokens: 300 },
        },
        { tool_calls: [done] },
      ],
    });
    const partial = events.find((e) => e.event_type === 'cognition_out' && e.payload.is_partial === true)!;
    expect(partial.payload).toMatchObject({ truncated: true, turn: 1 });
    // Only the part that arrived before the cut is recorded.
    expect(String(partial.payload.text)).not.toBe('Working on it, step one of many.');
    const cut = events.slice(0, events.indexOf(partial) + 1);
    const resumed = resumeMessages(cut);
    expect(resumed[0]).toEqual({ role: 'user', content: 'Go.' });
    expect(resumed.at(-2)).toEqual({ role: 'assistant', content: partial.payload.text });
    expect(resumed.at(-1)!.role).toBe('user');
    expect(resumed.at(-1)!.content).toMatch(/^\[Previous response was interrupted at /);
  }, 20_000);

  it('a call id used twice (in one turn, or again later) is renamed: every result stays with its call', async () => {
    const {
      runs,
      events,
      messages,
      server: s,
    } = await setUp({
      turns: [
        { tool_calls: [mark('a'), { ...mark('b'), id: 'toolu_a' }, { ...mark('c'), id: '' }] },
        { tool_calls: [{ ...mark('d'), id: 'toolu_a' }] },
        { tool_calls: [done] },
      ],
    });
    expect(runs.map((r) => r.tag)).toEqual(['a', 'b', 'c', 'd']);
    const ids = messages.flatMap((m) =>
      m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [],
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(reconstructMessages(events)).toEqual(messages);
    // Each result reached the model next to its own call.
    const third = JSON.stringify(s.requests[2]!.body);
    expect(third).toContain('"tag\\":\\"d\\"');
  }, 20_000);

  it('text mode: calls without ids in several turns keep their own results on replay', async () => {
    const { runs, events, messages } = await setUp(
      {
        turns: [
          { text: '<tool_use name="acme_mark">{"tag": "a"}</tool_use>' },
          { text: '<tool_use name="acme_mark">{"tag": "b"}</tool_use>' },
          { text: '<tool_use name="rye_directive_return">{"answer": "ok"}</tool_use>' },
        ],
      },
      { textParser: () => new TextToolParser() },
    );
    expect(runs.map((r) => r.tag)).toEqual(['a', 'b']);
    expect(reconstructMessages(events)).toEqual(messages);
  }, 20_000);
});
