import { afterEach, describe, expect, it } from 'vitest';
import {
  AnthropicStreamAssembler,
  buildAnthropicBody,
  createAnthropicModel,
} from '../src/provider/anthropic.js';
import { collectResponse } from '../src/provider/collect.js';
import type { HttpProviderConfig } from '../src/provider/http-config.js';
import type { ModelRequest, StreamPart } from '../src/provider/types.js';
import { type ReplayScript, type ReplayServer, startReplayServer } from '../src/testing.js';
import {
  allParts,
  closedPort,
  lastError,
  type RawServer,
  rawServer,
  timedParts,
} from './support/provider.js';

let server: ReplayServer | undefined;
let raw: RawServer | undefined;

afterEach(async () => {
  await server?.close();
  await raw?.close();
  server = undefined;
  raw = undefined;
});

async function serve(script: ReplayScript): Promise<ReplayServer> {
  server = await startReplayServer(script);
  return server;
}

function config(url: string, overrides: Partial<HttpProviderConfig> = {}): HttpProviderConfig {
  return {
    providerId: 'anthropic',
    modelId: 'claude-test',
    url: `${url}/v1/messages`,
    headers: { 'x-api-key': 'sk-test' },
    timeoutMs: 5000,
    stream: true,
    ...overrides,
  };
}

const request: ModelRequest = {
  model: 'claude-test',
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'Read a.txt' }],
  tools: [
    {
      name: 'rye_file_system_read',
      description: 'Read a file',
      schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  ],
  maxTokens: 1024,
};

const toolTurn = {
  thinking: 'The user wants a.txt.',
  text: 'Reading it.',
  tool_calls: [
    { id: 'toolu_01', name: 'rye_file_system_read', input: { path: 'docs/a-rather-long-name.txt' } },
  ],
  usage: { input_tokens: 812, output_tokens: 57 },
  chunk_size: 4,
};

/**
 * What a timeout or a refusal spares the caller here is a hang (a server that never answers, a
 * stream stalled for seconds): a bound far below that and far above a loaded machine's answer.
 */
const WELL_BEFORE_A_HANG = 15_000;

describe('Anthropic request body', () => {
  it('merges consecutive tool results, flags errors, and sends text + tool_use blocks', async () => {
    const s = await serve({ turns: [{ text: 'ok' }] });
    const model = createAnthropicModel(config(s.url));
    await collectResponse(
      model.stream({
        ...request,
        messages: [
          { role: 'user', content: 'Do it' },
          {
            role: 'assistant',
            content: 'Two reads.',
            tool_calls: [
              { id: 'toolu_a', name: 'rye_file_system_read', input: { path: 'a' } },
              { id: 'toolu_b', name: 'rye_file_system_read', input: { path: 'b' } },
            ],
          },
          { role: 'tool', tool_call_id: 'toolu_a', content: '{"content":"A"}' },
          { role: 'tool', tool_call_id: 'toolu_b', content: 'not found', is_error: true },
          { role: 'user', content: 'Continue.' },
          { role: 'assistant', content: '', tool_calls: [{ id: 'toolu_c', name: 'rye_search', input: {} }] },
          { role: 'tool', tool_call_id: 'toolu_c', content: '[]' },
        ],
      }),
    );
    const recorded = s.requests[0]!;
    expect(recorded.headers['x-api-key']).toBe('sk-test');
    expect(recorded.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded.headers['content-type']).toBe('application/json');
    expect(recorded.body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Do it' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Two reads.' },
            { type: 'tool_use', id: 'toolu_a', name: 'rye_file_system_read', input: { path: 'a' } },
            { type: 'tool_use', id: 'toolu_b', name: 'rye_file_system_read', input: { path: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"content":"A"}' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'not found', is_error: true },
            { type: 'text', text: 'Continue.' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_c', name: 'rye_search', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_c', content: '[]' }] },
      ],
      tools: [
        {
          name: 'rye_file_system_read',
          description: 'Read a file',
          input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      ],
      stream: true,
    });
  });

  it('omits empty tools and system, never sends undefined keys, and lets its own fields win over extraBody', () => {
    const body = buildAnthropicBody(
      { ...request, system: '', tools: [] },
      config('http://127.0.0.1:1', {
        stream: false,
        extraBody: { temperature: 0, model: 'ignored', top_k: undefined },
      }),
    );
    expect(body).toEqual({
      temperature: 0,
      model: 'claude-test',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Read a.txt' }],
      stream: false,
    });
    expect(Object.keys(body)).not.toContain('top_k');
  });

  it('drops an empty assistant turn (the API rejects it)', () => {
    const body = buildAnthropicBody(
      {
        ...request,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'b' },
        ],
      },
      config('http://127.0.0.1:1'),
    );
    expect(body['messages']).toEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
  });

  it('rejects an unusable config when the model is created', () => {
    expect(() => createAnthropicModel(config('not a url'))).toThrow(/url must be an absolute http\(s\) URL/);
    expect(() => createAnthropicModel(config('http://127.0.0.1:1', { timeoutMs: 0 }))).toThrow(/timeoutMs/);
  });
});

describe('Anthropic streaming', () => {
  it('yields thinking, text and a tool call assembled from split input_json deltas, with exact usage', async () => {
    const s = await serve({ turns: [toolTurn] });
    const parts = await allParts(createAnthropicModel(config(s.url)).stream(request));
    expect(parts.filter((p) => p.type === 'text-delta').length).toBeGreaterThan(1);
    const result = await collectResponse(
      (async function* () {
        yield* parts;
      })(),
    );
    expect(result).toEqual({
      response: {
        text: 'Reading it.',
        reasoning: 'The user wants a.txt.',
        toolCalls: [
          { id: 'toolu_01', name: 'rye_file_system_read', input: { path: 'docs/a-rather-long-name.txt' } },
        ],
        // output is message_delta's cumulative 57, not 57 + message_start's 1
        usage: { inputTokens: 812, outputTokens: 57 },
        finishReason: 'tool_use',
      },
    });
    // exactly one terminal part, last
    expect(parts.filter((p) => p.type === 'finish' || p.type === 'error')).toHaveLength(1);
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' });
  });

  it('gives the same response without streaming', async () => {
    const s = await serve({ turns: [toolTurn] });
    const result = await collectResponse(
      createAnthropicModel(config(s.url, { stream: false })).stream(request),
    );
    expect(s.requests[0]!.body).toMatchObject({ stream: false });
    expect(s.requests[0]!.headers['accept']).toBe('application/json');
    expect(result).toEqual({
      response: {
        text: 'Reading it.',
        reasoning: 'The user wants a.txt.',
        toolCalls: [
          { id: 'toolu_01', name: 'rye_file_system_read', input: { path: 'docs/a-rather-long-name.txt' } },
        ],
        usage: { inputTokens: 812, outputTokens: 57 },
        finishReason: 'tool_use',
      },
    });
  });

  it('parses empty tool input as {} and keeps unparseable input as {_raw}', async () => {
    const s = await serve({
      turns: [
        {
          tool_calls: [
            { id: 'toolu_e', name: 'rye_search', raw_input: '' },
            { id: 'toolu_b', name: 'rye_search', raw_input: '{"query": "unterminated' },
          ],
        },
      ],
    });
    const result = await collectResponse(createAnthropicModel(config(s.url)).stream(request));
    expect(result).toMatchObject({
      response: {
        toolCalls: [
          { id: 'toolu_e', input: {} },
          { id: 'toolu_b', input: { _raw: '{"query": "unterminated' } },
        ],
      },
    });
  });

  it('yields a tool call as soon as its block closes, before the final event arrives', async () => {
    const s = await serve({ turns: [{ ...toolTurn, hold_before_final_ms: 400 }] });
    const parts = await timedParts(createAnthropicModel(config(s.url)).stream(request));
    const call = parts.find((p) => p.part.type === 'tool-call')!;
    const finish = parts.find((p) => p.part.type === 'finish')!;
    expect(finish.at - call.at).toBeGreaterThanOrEqual(350);
  });

  it('keys blocks by index, even when deltas of two blocks interleave', () => {
    const a = new AnthropicStreamAssembler({ providerId: 'anthropic', requestId: undefined });
    const push = (event: Record<string, unknown>) => a.push(JSON.stringify(event));
    const delta = (index: number, partial_json: string) =>
      push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
    push({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 't1', name: 'x', input: {} },
    });
    push({
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 't2', name: 'y', input: {} },
    });
    delta(1, '{"a":');
    delta(2, '{"b":');
    delta(1, '1}');
    delta(2, '2}');
    expect(push({ type: 'content_block_stop', index: 2 })).toEqual([
      { type: 'tool-call', call: { id: 't2', name: 'y', input: { b: 2 } } },
    ]);
    expect(push({ type: 'content_block_stop', index: 1 })).toEqual([
      { type: 'tool-call', call: { id: 't1', name: 'x', input: { a: 1 } } },
    ]);
  });
});

describe('Anthropic failures', () => {
  it('reports a 529 with the provider message, code, request id, and as retryable', async () => {
    const s = await serve({ turns: [{ error: { status: 529, message: 'Overloaded' } }] });
    const parts = await allParts(createAnthropicModel(config(s.url)).stream(request));
    expect(parts).toHaveLength(1);
    expect(lastError(parts)).toEqual({
      providerId: 'anthropic',
      message: 'Overloaded',
      httpStatus: 529,
      errorClass: 'ProviderCallError',
      code: 'overloaded_error',
      requestId: 'req_replay_1',
      retryable: true,
    });
  });

  it('reads retry-after from a 429', async () => {
    const s = await serve({ turns: [{ error: { status: 429, message: 'Slow down', retry_after: 7 } }] });
    const error = lastError(await allParts(createAnthropicModel(config(s.url)).stream(request)));
    expect(error).toMatchObject({
      httpStatus: 429,
      code: 'rate_limit_error',
      retryAfterSeconds: 7,
      retryable: true,
    });
  });

  it('does not mark a 400 as retryable', async () => {
    const s = await serve({ turns: [{ error: { status: 400, message: 'messages: empty' } }] });
    const error = lastError(await allParts(createAnthropicModel(config(s.url)).stream(request)));
    expect(error).toMatchObject({ httpStatus: 400, code: 'invalid_request_error', retryable: false });
  });

  it('turns an SSE error event into a retryable error part after the parts that arrived', async () => {
    const s = await serve({
      turns: [{ text: 'Partial answer', stream_error: { type: 'overloaded_error', message: 'Overloaded' } }],
    });
    const result = await collectResponse(createAnthropicModel(config(s.url)).stream(request));
    expect(result).toMatchObject({
      error: {
        providerId: 'anthropic',
        message: 'Overloaded',
        code: 'overloaded_error',
        errorClass: 'ProviderCallError',
        httpStatus: 529,
        requestId: 'req_replay_1',
        retryable: true,
      },
      partial: { text: 'Partial answer', usage: { inputTokens: expect.any(Number) } },
    });
  });

  it('reports a mid-stream disconnect as a retryable ConnectionError and drops the unfinished tool call', async () => {
    // message_start, ping, text start, 3 text deltas, text stop, tool start, 2 json deltas: then the cut
    const s = await serve({
      turns: [{ ...toolTurn, thinking: undefined, text: 'Reading it.', disconnect_after_events: 10 }],
    });
    const result = await collectResponse(createAnthropicModel(config(s.url)).stream(request));
    expect(result).toMatchObject({
      error: { errorClass: 'ConnectionError', httpStatus: 0, retryable: true, providerId: 'anthropic' },
      partial: { text: 'Reading it.', toolCalls: [] },
    });
  });

  it('reports a stream that ends cleanly but early (no message_stop) as a ConnectionError', () => {
    const a = new AnthropicStreamAssembler({ providerId: 'anthropic', requestId: 'req_1' });
    a.push(
      JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 3, output_tokens: 1 } } }),
    );
    expect(a.end()).toEqual([
      {
        type: 'error',
        error: expect.objectContaining({
          errorClass: 'ConnectionError',
          httpStatus: 0,
          retryable: true,
          requestId: 'req_1',
        }),
      },
    ]);
  });

  it('fails fast with ConnectionError when nothing listens', async () => {
    const port = await closedPort();
    const started = performance.now();
    const error = lastError(
      await allParts(createAnthropicModel(config(`http://127.0.0.1:${port}`)).stream(request)),
    );
    expect(performance.now() - started).toBeLessThan(WELL_BEFORE_A_HANG);
    expect(error).toMatchObject({ errorClass: 'ConnectionError', httpStatus: 0, retryable: true });
    expect(error.message).toMatch(
      /Could not reach provider anthropic at http:\/\/127\.0\.0\.1:\d+\/v1\/messages: .*ECONNREFUSED/,
    );
  });

  it('fails within the timeout when the server never answers', async () => {
    raw = await rawServer(() => undefined); // accepts, never responds
    const started = performance.now();
    const error = lastError(
      await allParts(createAnthropicModel(config(raw.url, { timeoutMs: 300 })).stream(request)),
    );
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(WELL_BEFORE_A_HANG);
    expect(error).toMatchObject({ errorClass: 'TimeoutError', httpStatus: 0, retryable: true });
    expect(error.message).toMatch(/No response from provider anthropic .* within 300 ms/);
  });

  it('fails within the timeout when the stream stalls between chunks', async () => {
    const s = await serve({ turns: [{ text: 'abcdef', chunk_size: 1, chunk_delay_ms: 5000 }] });
    const started = performance.now();
    const error = lastError(
      await allParts(createAnthropicModel(config(s.url, { timeoutMs: 300 })).stream(request)),
    );
    expect(performance.now() - started).toBeLessThan(WELL_BEFORE_A_HANG);
    expect(error).toMatchObject({ errorClass: 'TimeoutError', httpStatus: 0, requestId: 'req_replay_1' });
    expect(error.message).toMatch(/stalled: no data for 300 ms/);
  });

  it('does not count the consumer’s own time against the timeout', async () => {
    const s = await serve({ turns: [{ text: 'abc', chunk_size: 1 }] });
    const parts: StreamPart[] = [];
    for await (const part of createAnthropicModel(config(s.url, { timeoutMs: 200 })).stream(request)) {
      parts.push(part);
      if (part.type === 'text-delta') await new Promise((r) => setTimeout(r, 300));
    }
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' });
  });

  it('stops with CancelledError when the caller aborts mid-stream', async () => {
    const s = await serve({ turns: [{ text: 'a slow answer', chunk_size: 2, chunk_delay_ms: 100 }] });
    const controller = new AbortController();
    const parts: StreamPart[] = [];
    for await (const part of createAnthropicModel(config(s.url)).stream({
      ...request,
      signal: controller.signal,
    })) {
      parts.push(part);
      if (part.type === 'text-delta') controller.abort();
    }
    expect(lastError(parts)).toMatchObject({ errorClass: 'CancelledError', httpStatus: 0, retryable: false });
    expect(parts.filter((p) => p.type === 'error')).toHaveLength(1);
  });

  it('stops with CancelledError when aborted while waiting for headers, or before the call', async () => {
    const s = await serve({ turns: [{ text: 'late', delay_ms: 5000 }] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = lastError(
      await allParts(createAnthropicModel(config(s.url)).stream({ ...request, signal: controller.signal })),
    );
    expect(error).toMatchObject({ errorClass: 'CancelledError', retryable: false });
    const early = lastError(
      await allParts(createAnthropicModel(config(s.url)).stream({ ...request, signal: AbortSignal.abort() })),
    );
    expect(early.errorClass).toBe('CancelledError');
  });

  it('drops the connection when the consumer stops reading early', async () => {
    let closed = false;
    raw = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 1 } } })}\n\n`,
      );
      res.write(
        `data: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } })}\n\n`,
      );
      res.on('close', () => {
        closed = true;
      });
    });
    for await (const part of createAnthropicModel(config(raw.url)).stream(request)) {
      if (part.type === 'text-delta') break;
    }
    await expect.poll(() => closed).toBe(true);
  });

  it('reports a redirect instead of following it with the credentials', async () => {
    let followed = false;
    raw = await rawServer((req, res) => {
      if (req.url === '/elsewhere') followed = true;
      res.writeHead(307, { location: '/elsewhere' });
      res.end();
    });
    const error = lastError(await allParts(createAnthropicModel(config(raw.url)).stream(request)));
    expect(followed).toBe(false);
    expect(error).toMatchObject({ httpStatus: 307, retryable: false, errorClass: 'ProviderCallError' });
    expect(error.message).toMatch(/redirect to \/elsewhere.*set the provider url to the final endpoint/);
  });

  it('reads a JSON answer to a stream request whole, and reports a body that is not JSON', async () => {
    raw = await rawServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        req.headers['x-api-key'] === 'bad'
          ? '<html>wrong endpoint</html>'
          : JSON.stringify({
              type: 'message',
              content: [{ type: 'text', text: 'whole' }],
              stop_reason: 'end_turn',
            }),
      );
    });
    const ok = await collectResponse(createAnthropicModel(config(raw.url)).stream(request));
    expect(ok).toMatchObject({ response: { text: 'whole', finishReason: 'end_turn' } });
    const bad = lastError(
      await allParts(
        createAnthropicModel(config(raw.url, { headers: { 'x-api-key': 'bad' } })).stream(request),
      ),
    );
    expect(bad).toMatchObject({ httpStatus: 200, retryable: false });
    expect(bad.message).toMatch(/not JSON/);
  });
});
