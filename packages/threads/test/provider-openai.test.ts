import { afterEach, describe, expect, it } from 'vitest';
import { collectResponse } from '../src/provider/collect.js';
import type { HttpProviderConfig } from '../src/provider/http-config.js';
import { buildOpenAIBody, createOpenAIModel, OpenAIStreamAssembler } from '../src/provider/openai.js';
import type { ModelRequest } from '../src/provider/types.js';
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

/** As the lead builds it: OPENAI_BASE_URL=<url>/v1, endpoint <base>/chat/completions. */
function config(url: string, overrides: Partial<HttpProviderConfig> = {}): HttpProviderConfig {
  return {
    providerId: 'openai',
    modelId: 'gpt-4o-mini',
    url: `${url}/v1/chat/completions`,
    headers: { authorization: 'Bearer sk-test' },
    timeoutMs: 5000,
    stream: true,
    ...overrides,
  };
}

const request: ModelRequest = {
  model: 'gpt-4o-mini',
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'Find threads' }],
  tools: [
    {
      name: 'rye_search',
      description: 'Search items',
      schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  ],
  maxTokens: 2048,
};

const twoCalls = {
  text: 'Searching twice.',
  tool_calls: [
    { id: 'call_1', name: 'rye_search', input: { query: 'managed threads' } },
    { id: 'call_2', name: 'rye_load', input: { item_id: 'directive:agent/core/base' } },
  ],
  usage: { input_tokens: 900, output_tokens: 40 },
  chunk_size: 5,
};

/**
 * What a timeout or a refusal spares the caller here is a hang (a server that never answers, a
 * stream stalled for seconds): a bound far below that and far above a loaded machine's answer.
 */
const WELL_BEFORE_A_HANG = 15_000;

describe('OpenAI request body', () => {
  it('sends system as the first message, assistant calls with JSON-string arguments, and asks for stream usage', async () => {
    const s = await serve({ turns: [{ text: 'ok' }] });
    await collectResponse(
      createOpenAIModel(config(s.url)).stream({
        ...request,
        messages: [
          { role: 'user', content: 'Find threads' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: 'call_a', name: 'rye_search', input: { query: 'x' } }],
          },
          { role: 'tool', tool_call_id: 'call_a', content: '{"results":[]}', is_error: false },
          { role: 'assistant', content: 'Nothing found.' },
          { role: 'user', content: 'Try again' },
        ],
      }),
    );
    const recorded = s.requests[0]!;
    expect(recorded.format).toBe('openai');
    expect(recorded.headers['authorization']).toBe('Bearer sk-test');
    expect(recorded.body).toEqual({
      model: 'gpt-4o-mini',
      max_tokens: 2048,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Find threads' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { type: 'function', id: 'call_a', function: { name: 'rye_search', arguments: '{"query":"x"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"results":[]}' },
        { role: 'assistant', content: 'Nothing found.' },
        { role: 'user', content: 'Try again' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'rye_search',
            description: 'Search items',
            parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
          },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(Object.keys(recorded.body as object)).not.toContain('system');
  });

  it('uses max_completion_tokens for o-series models, omits empty tools and stream_options when not streaming', () => {
    for (const model of ['o1', 'o3-mini', 'o4-mini-2025-04-16', 'o3']) {
      const body = buildOpenAIBody(
        { ...request, model, tools: [] },
        config('http://127.0.0.1:1', { stream: false }),
      );
      expect(body['max_completion_tokens']).toBe(2048);
      expect(body).not.toHaveProperty('max_tokens');
      expect(body).not.toHaveProperty('tools');
      expect(body).not.toHaveProperty('stream_options');
      expect(body['stream']).toBe(false);
    }
    for (const model of ['gpt-4o', 'omni-moderation', 'o10-not-a-model']) {
      expect(buildOpenAIBody({ ...request, model }, config('http://127.0.0.1:1'))).toHaveProperty(
        'max_tokens',
        2048,
      );
    }
    const forced = buildOpenAIBody(
      request,
      config('http://127.0.0.1:1', {
        maxTokensField: 'max_completion_tokens',
        extraBody: { max_tokens: 5, seed: 1 },
      }),
    );
    expect(forced).toMatchObject({ max_completion_tokens: 2048, seed: 1 });
    expect(forced).not.toHaveProperty('max_tokens');
    const noSystem = buildOpenAIBody({ ...request, system: '' }, config('http://127.0.0.1:1'));
    expect(noSystem['messages']).toEqual([{ role: 'user', content: 'Find threads' }]);
  });
});

describe('OpenAI streaming', () => {
  it('assembles text and two tool calls from split argument deltas, with usage from the usage chunk', async () => {
    const s = await serve({ turns: [twoCalls] });
    const parts = await allParts(createOpenAIModel(config(s.url)).stream(request));
    expect(s.requests[0]!.body).toMatchObject({ stream_options: { include_usage: true } });
    expect((s.requests[0]!.body as { messages: unknown[] }).messages[0]).toEqual({
      role: 'system',
      content: 'You are terse.',
    });
    const result = await collectResponse(
      (async function* () {
        yield* parts;
      })(),
    );
    expect(result).toEqual({
      response: {
        text: 'Searching twice.',
        reasoning: '',
        toolCalls: [
          { id: 'call_1', name: 'rye_search', input: { query: 'managed threads' } },
          { id: 'call_2', name: 'rye_load', input: { item_id: 'directive:agent/core/base' } },
        ],
        usage: { inputTokens: 900, outputTokens: 40 },
        finishReason: 'tool_calls',
      },
    });
    // usage before the one finish part, which is last
    const kinds = parts.map((p) => p.type);
    expect(kinds.indexOf('usage')).toBeLessThan(kinds.indexOf('finish'));
    expect(kinds.filter((k) => k === 'finish' || k === 'error')).toEqual(['finish']);
  });

  it('gives the same response without streaming', async () => {
    const s = await serve({ turns: [twoCalls] });
    const result = await collectResponse(createOpenAIModel(config(s.url, { stream: false })).stream(request));
    expect(s.requests[0]!.body).not.toHaveProperty('stream_options');
    expect(result).toMatchObject({
      response: {
        text: 'Searching twice.',
        toolCalls: [
          { id: 'call_1', name: 'rye_search', input: { query: 'managed threads' } },
          { id: 'call_2', name: 'rye_load', input: { item_id: 'directive:agent/core/base' } },
        ],
        usage: { inputTokens: 900, outputTokens: 40 },
        finishReason: 'tool_calls',
      },
    });
  });

  it('records reasoning_content as reasoning, streamed and whole', async () => {
    const s = await serve({
      turns: [
        { thinking: 'Hmm, let me see.', text: 'Yes.' },
        { thinking: 'Whole.', text: 'No.' },
      ],
    });
    const streamed = await collectResponse(createOpenAIModel(config(s.url)).stream(request));
    expect(streamed).toMatchObject({
      response: { reasoning: 'Hmm, let me see.', text: 'Yes.', finishReason: 'stop' },
    });
    const whole = await collectResponse(createOpenAIModel(config(s.url, { stream: false })).stream(request));
    expect(whole).toMatchObject({ response: { reasoning: 'Whole.', text: 'No.' } });
  });

  it('yields a call when a higher index appears, and the last one at finish_reason', () => {
    const a = new OpenAIStreamAssembler({ providerId: 'openai', requestId: undefined });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      a.push(JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] }));
    const call = (index: number, fields: Record<string, unknown>) =>
      chunk({ tool_calls: [{ index, ...fields }] });
    expect(call(0, { id: 'c0', type: 'function', function: { name: 'a', arguments: '' } })).toEqual([]);
    expect(call(0, { function: { arguments: '{"x":' } })).toEqual([]);
    expect(call(0, { function: { arguments: '1}' } })).toEqual([]);
    expect(call(1, { id: 'c1', type: 'function', function: { name: 'b', arguments: '{"y"' } })).toEqual([
      { type: 'tool-call', call: { id: 'c0', name: 'a', input: { x: 1 } } },
    ]);
    expect(call(1, { function: { arguments: ':2' } })).toEqual([]);
    expect(chunk({}, 'tool_calls')).toEqual([
      { type: 'tool-call', call: { id: 'c1', name: 'b', input: { _raw: '{"y":2' } } },
    ]);
    expect(
      a.push(JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 6 } })),
    ).toEqual([{ type: 'usage', usage: { inputTokens: 5, outputTokens: 6 } }]);
    expect(a.push('[DONE]')).toEqual([{ type: 'finish', reason: 'tool_calls' }]);
    expect(a.done).toBe(true);
  });

  it('accepts a stream that ends after finish_reason without [DONE], and rejects one that ends before it', () => {
    const ok = new OpenAIStreamAssembler({ providerId: 'openai', requestId: undefined });
    ok.push(JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }));
    expect(ok.end()).toEqual([{ type: 'finish', reason: 'stop' }]);
    const cut = new OpenAIStreamAssembler({ providerId: 'openai', requestId: undefined });
    cut.push(JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }));
    expect(cut.end()).toEqual([
      {
        type: 'error',
        error: expect.objectContaining({ errorClass: 'ConnectionError', httpStatus: 0, retryable: true }),
      },
    ]);
  });

  it('yields tool calls before the final event arrives', async () => {
    const s = await serve({ turns: [{ ...twoCalls, hold_before_final_ms: 400 }] });
    const parts = await timedParts(createOpenAIModel(config(s.url)).stream(request));
    const calls = parts.filter((p) => p.part.type === 'tool-call');
    const finish = parts.find((p) => p.part.type === 'finish')!;
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(finish.at - call.at).toBeGreaterThanOrEqual(350);
  });
});

describe('OpenAI failures', () => {
  it('reads retry-after, x-request-id and the error code of a 429', async () => {
    const s = await serve({
      turns: [{ error: { status: 429, message: 'Rate limit reached for gpt-4o-mini', retry_after: 20 } }],
    });
    const error = lastError(await allParts(createOpenAIModel(config(s.url)).stream(request)));
    expect(error).toEqual({
      providerId: 'openai',
      message: 'Rate limit reached for gpt-4o-mini',
      httpStatus: 429,
      errorClass: 'ProviderCallError',
      code: 'rate_limit_exceeded',
      requestId: 'req_replay_1',
      retryAfterSeconds: 20,
      retryable: true,
    });
  });

  it('does not retry a 429 that means the quota is used up', async () => {
    const s = await serve({
      turns: [
        { error: { status: 429, type: 'insufficient_quota', message: 'You exceeded your current quota' } },
      ],
    });
    const error = lastError(await allParts(createOpenAIModel(config(s.url)).stream(request)));
    expect(error).toMatchObject({ httpStatus: 429, code: 'insufficient_quota', retryable: false });
  });

  it('reports 500 and 503 as retryable', async () => {
    const s = await serve({ turns: [{ error: { status: 500 } }, { error: { status: 503 } }] });
    for (const status of [500, 503]) {
      const error = lastError(await allParts(createOpenAIModel(config(s.url)).stream(request)));
      expect(error).toMatchObject({ httpStatus: status, code: 'server_error', retryable: true });
    }
  });

  it('turns an error chunk inside the stream into an error part', async () => {
    const s = await serve({
      turns: [{ text: 'Partial', stream_error: { type: 'server_error', message: 'Upstream broke' } }],
    });
    const result = await collectResponse(createOpenAIModel(config(s.url)).stream(request));
    expect(result).toMatchObject({
      error: {
        message: 'Upstream broke',
        code: 'server_error',
        httpStatus: 500,
        retryable: true,
        requestId: 'req_replay_1',
      },
      partial: { text: 'Partial' },
    });
  });

  it('reports a mid-stream disconnect as a ConnectionError, keeping the call that completed', async () => {
    // role chunk, 4 text chunks, call 0 (1 + 6 argument chunks), call 1 (start + 1): then the cut
    const s = await serve({ turns: [{ ...twoCalls, disconnect_after_events: 14 }] });
    const result = await collectResponse(createOpenAIModel(config(s.url)).stream(request));
    expect(result).toMatchObject({
      error: { errorClass: 'ConnectionError', httpStatus: 0, retryable: true },
      partial: {
        text: 'Searching twice.',
        toolCalls: [{ id: 'call_1', input: { query: 'managed threads' } }],
      },
    });
  });

  it('fails fast with ConnectionError when nothing listens', async () => {
    const port = await closedPort();
    const started = performance.now();
    const error = lastError(
      await allParts(createOpenAIModel(config(`http://127.0.0.1:${port}`)).stream(request)),
    );
    expect(performance.now() - started).toBeLessThan(WELL_BEFORE_A_HANG);
    expect(error).toMatchObject({
      errorClass: 'ConnectionError',
      httpStatus: 0,
      retryable: true,
      providerId: 'openai',
    });
  });

  it('fails within the timeout when the server never answers, streaming or not', async () => {
    raw = await rawServer(() => undefined);
    for (const stream of [true, false]) {
      const started = performance.now();
      const error = lastError(
        await allParts(createOpenAIModel(config(raw.url, { timeoutMs: 250, stream })).stream(request)),
      );
      expect(performance.now() - started).toBeLessThan(WELL_BEFORE_A_HANG);
      expect(error).toMatchObject({ errorClass: 'TimeoutError', httpStatus: 0 });
    }
  });

  it('stops with CancelledError when the caller aborts', async () => {
    const s = await serve({ turns: [{ text: 'slow words here', chunk_size: 3, chunk_delay_ms: 100 }] });
    const controller = new AbortController();
    const parts = [];
    for await (const part of createOpenAIModel(config(s.url)).stream({
      ...request,
      signal: controller.signal,
    })) {
      parts.push(part);
      if (part.type === 'text-delta') controller.abort(new Error('user pressed stop'));
    }
    expect(lastError(parts)).toMatchObject({ errorClass: 'CancelledError', httpStatus: 0, retryable: false });
  });
});

describe('collectResponse', () => {
  it('keeps the last value of each usage field and reports a stream without a terminal part', async () => {
    async function* parts() {
      yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 1 } } as const;
      yield { type: 'text-delta', text: 'a' } as const;
      yield { type: 'usage', usage: { outputTokens: 7 } } as const;
    }
    expect(await collectResponse(parts(), 'openai')).toEqual({
      error: expect.objectContaining({
        providerId: 'openai',
        errorClass: 'ConnectionError',
        retryable: true,
      }),
      partial: {
        text: 'a',
        reasoning: '',
        toolCalls: [],
        usage: { inputTokens: 10, outputTokens: 7 },
        finishReason: 'error',
      },
    });
  });
});
