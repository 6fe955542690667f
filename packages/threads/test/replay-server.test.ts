import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  loadReplayScript,
  parseReplayScript,
  type ReplayScript,
  type ReplayServer,
  runReplayCli,
  startReplayServer,
} from '../src/testing.js';

/** Wire payloads are read loosely in these tests: the assertions say what shape is expected. */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Loose = any;

let server: ReplayServer | undefined;
let dir: string | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function serve(script: ReplayScript): Promise<ReplayServer> {
  server = await startReplayServer(script);
  return server;
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The `data` payloads of an SSE body, with their `event:` names. */
function sse(text: string): { event: string | undefined; data: string }[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data };
    });
}

const anthropicRequest = {
  model: 'claude-test',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'hi' }],
};
const openaiRequest = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };

describe('replay server: Anthropic wire format', () => {
  it('streams the real event sequence, tool input split over several deltas, and records the request', async () => {
    const s = await serve({
      turns: [
        {
          thinking: 'Let me think about this.',
          text: 'Reading the file now.',
          tool_calls: [{ name: 'rye_file_system_read', input: { path: 'src/a-long-file-name.ts' } }],
          usage: { input_tokens: 812, output_tokens: 57 },
          chunk_size: 5,
        },
      ],
    });
    const res = await post(
      `${s.url}/v1/messages`,
      { ...anthropicRequest, stream: true },
      { 'x-api-key': 'k' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = sse(await res.text());
    const payloads = events.map((e) => JSON.parse(e.data) as Record<string, Loose>);
    // event: names match the payload types
    for (const [i, e] of events.entries()) expect(e.event).toBe(payloads[i]!['type']);
    const types = payloads.map((p) => p['type']);
    expect(types[0]).toBe('message_start');
    expect(types.at(-2)).toBe('message_delta');
    expect(types.at(-1)).toBe('message_stop');
    expect(payloads[0]!['message'].usage.input_tokens).toBe(812);
    expect(payloads.at(-2)!['usage']).toEqual({ output_tokens: 57 });
    expect(payloads.at(-2)!['delta'].stop_reason).toBe('tool_use');

    const starts = payloads.filter((p) => p['type'] === 'content_block_start');
    expect(starts.map((p) => [p['index'], p['content_block'].type])).toEqual([
      [0, 'thinking'],
      [1, 'text'],
      [2, 'tool_use'],
    ]);
    expect(starts[2]!['content_block'].id).toMatch(/^toolu_/);
    const deltas = (index: number, key: string) =>
      payloads
        .filter((p) => p['type'] === 'content_block_delta' && p['index'] === index && key in p['delta'])
        .map((p) => p['delta'][key] as string);
    expect(deltas(0, 'thinking').join('')).toBe('Let me think about this.');
    expect(deltas(1, 'text').join('')).toBe('Reading the file now.');
    const json = deltas(2, 'partial_json');
    expect(json.length).toBeGreaterThan(3);
    expect(JSON.parse(json.join(''))).toEqual({ path: 'src/a-long-file-name.ts' });

    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({
      format: 'anthropic',
      path: '/v1/messages',
      body: { ...anthropicRequest, stream: true },
    });
    expect(s.requests[0]!.headers['x-api-key']).toBe('k');
    expect(typeof s.requests[0]!.receivedAt).toBe('number');
  });

  it('answers a non-stream request with a whole message', async () => {
    const s = await serve({
      turns: [
        { text: 'Done.', tool_calls: [{ id: 'toolu_given', name: 'rye_search', input: { query: 'x' } }] },
      ],
    });
    const res = await post(`${s.url}/v1/messages`, anthropicRequest);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const body = (await res.json()) as Record<string, Loose>;
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Done.' },
        { type: 'tool_use', id: 'toolu_given', name: 'rye_search', input: { query: 'x' } },
      ],
    });
    expect(body['usage'].input_tokens).toBeGreaterThan(0);
    expect(body['usage'].output_tokens).toBeGreaterThan(0);
  });

  it('sends HTTP errors with the real body and headers', async () => {
    const s = await serve({ turns: [{ error: { status: 529, retry_after: 7 } }] });
    const res = await post(`${s.url}/v1/messages`, { ...anthropicRequest, stream: true });
    expect(res.status).toBe(529);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Replayed overloaded_error (HTTP 529)' },
    });
  });

  it('sends an SSE error event after the content when the turn has a stream_error', async () => {
    const s = await serve({
      turns: [{ text: 'partial answer', stream_error: { type: 'overloaded_error', message: 'Overloaded' } }],
    });
    const events = sse(
      await (await post(`${s.url}/v1/messages`, { ...anthropicRequest, stream: true })).text(),
    );
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    const types = events.map((e) => JSON.parse(e.data).type);
    expect(types).toContain('content_block_stop');
    expect(types).not.toContain('message_delta');
    expect(types).not.toContain('message_stop');
  });

  it('cuts the connection after N events', async () => {
    const s = await serve({
      turns: [{ text: 'a long answer that is cut', disconnect_after_events: 3, chunk_size: 4 }],
    });
    const res = await post(`${s.url}/v1/messages`, { ...anthropicRequest, stream: true });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });
});

describe('replay server: OpenAI wire format', () => {
  const script: ReplayScript = {
    turns: [
      {
        text: 'Searching.',
        tool_calls: [
          { name: 'rye_search', input: { query: 'threads and tools' } },
          { name: 'rye_load', input: { item_id: 'directive:x/y' } },
        ],
        usage: { input_tokens: 900, output_tokens: 40 },
        chunk_size: 6,
      },
    ],
  };

  it('streams chunks with tool-call argument deltas and sends usage only when include_usage was asked', async () => {
    const s = await serve({ turns: [script.turns[0]!, script.turns[0]!] });
    const without = sse(
      await (await post(`${s.url}/v1/chat/completions`, { ...openaiRequest, stream: true })).text(),
    );
    expect(without.at(-1)!.data).toBe('[DONE]');
    expect(without.some((e) => e.data.includes('prompt_tokens'))).toBe(false);

    const res = await post(`${s.url}/v1/chat/completions`, {
      ...openaiRequest,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const events = sse(await res.text());
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data) as Record<string, Loose>);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 },
    });
    expect(chunks.at(-2)!['choices'][0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    const text = chunks.map((c) => c['choices'][0]?.delta?.content ?? '').join('');
    expect(text).toBe('Searching.');
    const calls = chunks.flatMap((c) => c['choices'][0]?.delta?.tool_calls ?? []);
    const args = (i: number) =>
      calls
        .filter((c: Loose) => c.index === i)
        .map((c: Loose) => c.function.arguments ?? '')
        .join('');
    expect(calls.filter((c: Loose) => c.index === 0).length).toBeGreaterThan(3);
    expect(calls.find((c: Loose) => c.index === 0 && c.id)).toMatchObject({
      type: 'function',
      function: { name: 'rye_search' },
    });
    expect(calls.find((c: Loose) => c.index === 1 && c.id).id).toMatch(/^call_/);
    expect(JSON.parse(args(0))).toEqual({ query: 'threads and tools' });
    expect(JSON.parse(args(1))).toEqual({ item_id: 'directive:x/y' });
    expect(s.requests.map((r) => r.format)).toEqual(['openai', 'openai']);
  });

  it('answers a non-stream request with choices[0].message and JSON-string arguments', async () => {
    const s = await serve(script);
    const body = (await (await post(`${s.url}/v1/chat/completions`, openaiRequest)).json()) as Record<
      string,
      Loose
    >;
    expect(body['object']).toBe('chat.completion');
    expect(body['choices'][0].finish_reason).toBe('tool_calls');
    expect(body['choices'][0].message.content).toBe('Searching.');
    expect(body['choices'][0].message.tool_calls[0]).toMatchObject({
      type: 'function',
      function: { name: 'rye_search', arguments: '{"query":"threads and tools"}' },
    });
    expect(body['usage']).toEqual({ prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 });
  });

  it('sends OpenAI error bodies, with retry-after', async () => {
    const s = await serve({
      turns: [{ error: { status: 429, message: 'Rate limit reached', retry_after: 3 } }],
    });
    const res = await post(`${s.url}/v1/chat/completions`, openaiRequest);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.json()).toEqual({
      error: {
        message: 'Rate limit reached',
        type: 'rate_limit_exceeded',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
  });
});

describe('replay server: script flow and timing', () => {
  it('plays the turns in order across both formats, then says the script is exhausted', async () => {
    const s = await serve({ turns: [{ text: 'one' }, { text: 'two' }] });
    const a = (await (await post(`${s.url}/v1/messages`, anthropicRequest)).json()) as Record<string, Loose>;
    const b = (await (await post(`${s.url}/v1/chat/completions`, openaiRequest)).json()) as Record<
      string,
      Loose
    >;
    expect(a['content'][0].text).toBe('one');
    expect(b['choices'][0].message.content).toBe('two');
    const c = await post(`${s.url}/v1/messages`, anthropicRequest);
    expect(c.status).toBe(500);
    const error = (await c.json()) as Record<string, Loose>;
    expect(error['error'].message).toMatch(
      /Replay script exhausted: this is request 3, but the script has only 2 turn/,
    );
    expect(s.requests).toHaveLength(3);
  });

  it('answers unknown paths with 404 without using a turn', async () => {
    const s = await serve({ turns: [{ text: 'one' }] });
    expect((await post(`${s.url}/v1/complete`, {})).status).toBe(404);
    const a = (await (await post(`${s.url}/v1/messages`, anthropicRequest)).json()) as Record<string, Loose>;
    expect(a['content'][0].text).toBe('one');
  });

  it('waits delay_ms before headers and paces events with chunk_delay_ms and hold_before_final_ms', async () => {
    const s = await serve({
      defaults: { chunk_delay_ms: 20 },
      turns: [{ text: 'abc', chunk_size: 1, delay_ms: 150, hold_before_final_ms: 200 }],
    });
    const started = performance.now();
    const res = await post(`${s.url}/v1/messages`, { ...anthropicRequest, stream: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const arrivals: { at: number; text: string }[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of res.body!)
      arrivals.push({ at: performance.now(), text: decoder.decode(chunk) });
    const when = (marker: string) => arrivals.find((a) => a.text.includes(marker))!.at;
    // 3 text deltas paced 20 ms apart, and the hold before message_stop
    expect(when('"text":"c"') - when('"text":"a"')).toBeGreaterThanOrEqual(35);
    expect(when('message_stop') - when('message_delta')).toBeGreaterThanOrEqual(190);
  });
});

describe('replay scripts (YAML)', () => {
  it('loads a YAML script', async () => {
    dir = await mkdtemp(join(tmpdir(), 'rye-replay-'));
    const path = join(dir, 'script.yaml');
    await writeFile(
      path,
      'defaults: {chunk_delay_ms: 5}\nturns:\n  - text: hello\n    tool_calls:\n      - name: rye_search\n        input: {query: x}\n  - error: {status: 529}\n',
    );
    const script = await loadReplayScript(path);
    expect(script.turns).toHaveLength(2);
    expect(script.turns[0]!.tool_calls![0]!.input).toEqual({ query: 'x' });
  });

  it('names the turn and key at fault', () => {
    const bad = (yaml: string) => () => parseReplayScript(yaml);
    expect(bad('turns:\n  - text: ok\n  - txt: typo\n')).toThrow(/turn 2: unknown key "txt"/);
    expect(bad('turns:\n  - tool_calls: [{input: {}}]\n')).toThrow(
      /turn 1\.tool_calls\[0\]\.name must be a non-empty string/,
    );
    expect(bad('turns:\n  - error: {status: 200}\n')).toThrow(
      /turn 1\.error\.status must be an integer from 400 to 599/,
    );
    expect(bad('turns:\n  - error: {type: x}\n')).toThrow(/turn 1\.error\.status is required/);
    expect(bad('turns:\n  - {text: a}\n  - {text: b}\n  - {chunk_delay_ms: -1}\n')).toThrow(
      /turn 3\.chunk_delay_ms must be a number >= 0, got number -1/,
    );
    expect(bad('turns:\n  - {chunk_size: 0}\n')).toThrow(/turn 1\.chunk_size must be an integer >= 1/);
    expect(bad('turns:\n  - {usage: {input_tokens: "many"}}\n')).toThrow(
      /turn 1\.usage\.input_tokens must be an integer/,
    );
    expect(bad('turns:\n  - {error: {status: 500}, disconnect_after_events: 2}\n')).toThrow(
      /turn 1: error and disconnect_after_events cannot be combined/,
    );
    expect(bad('turns: []\n')).toThrow(/turns must be a non-empty list/);
    expect(bad('defaults: {delay: 3}\nturns: [{text: a}]\n')).toThrow(/defaults: unknown key "delay"/);
    expect(bad('turns:\n  - text: [unclosed\n')).toThrow(/not valid YAML \(line \d+\)/);
    expect(bad('- just a list\n')).toThrow(/must be an object with a turns list, got a list/);
    try {
      parseReplayScript('turns: [{txt: 1}]', 'replay script my.yaml');
    } catch (error) {
      expect(error).toMatchObject({
        code: 'VALIDATION',
        message: expect.stringContaining('Invalid replay script my.yaml'),
      });
    }
  });

  it('rejects an invalid script given to startReplayServer', async () => {
    await expect(
      startReplayServer({ turns: [{ tool_calls: [{ name: '' }] }] } as ReplayScript),
    ).rejects.toThrow(/turn 1\.tool_calls\[0\]\.name/);
  });

  it('reports a missing script file as NOT_FOUND', async () => {
    await expect(loadReplayScript(join(tmpdir(), 'no-such-rye-script.yaml'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

describe('runReplayCli', () => {
  function sink() {
    let text = '';
    return {
      write: (s: string) => (text += s),
      get text() {
        return text;
      },
    };
  }

  it('prints the base URL and env lines, serves until stopped', async () => {
    dir = await mkdtemp(join(tmpdir(), 'rye-replay-'));
    const path = join(dir, 'script.yaml');
    await writeFile(path, 'turns:\n  - text: from the cli\n');
    const stdout = sink();
    const stderr = sink();
    const stop = new AbortController();
    const done = runReplayCli([path, '--port', '0'], { stdout, stderr, signal: stop.signal });
    await expect.poll(() => stdout.text).toContain('OPENAI_BASE_URL=');
    const url = /ANTHROPIC_BASE_URL=(\S+)/.exec(stdout.text)![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stdout.text).toContain(`OPENAI_BASE_URL=${url}/v1\n`);
    const body = (await (await post(`${url}/v1/messages`, anthropicRequest)).json()) as Record<string, Loose>;
    expect(body['content'][0].text).toBe('from the cli');
    expect(stderr.text).toContain('anthropic whole request → turn 1/1');
    stop.abort();
    expect(await done).toBe(0);
    await expect(fetch(`${url}/v1/messages`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('returns 2 for bad arguments and 1 for a bad script', async () => {
    const stderr = sink();
    expect(await runReplayCli([], { stderr })).toBe(2);
    expect(stderr.text).toContain('Missing the script path');
    expect(await runReplayCli(['a.yaml', '--port', 'x'], { stderr })).toBe(2);
    dir = await mkdtemp(join(tmpdir(), 'rye-replay-'));
    const path = join(dir, 'bad.yaml');
    await writeFile(path, 'turns:\n  - txt: typo\n');
    const err2 = sink();
    expect(await runReplayCli([path], { stderr: err2 })).toBe(1);
    expect(err2.text).toContain('turn 1: unknown key "txt"');
  });

  it('names the option it takes when given one it does not', async () => {
    const stderr = sink();
    expect(await runReplayCli(['a.yaml', '--prot', '3'], { stderr })).toBe(2);
    expect(stderr.text.split('\n')[0]).toBe('rye replay: Unknown option --prot: the only option is --port N');
  });
});

describe('replay server: per_conversation', () => {
  it('plays each request the turn its own conversation is at, so concurrent threads each start at turn 1', async () => {
    const { url } = await serve({ per_conversation: true, turns: [{ text: 'first' }, { text: 'second' }] });
    const ask = async (messages: unknown[]) => {
      const response = await post(`${url}/v1/messages`, { model: 'm', max_tokens: 10, messages });
      return ((await response.json()) as Loose).content[0].text;
    };
    const opening = [{ role: 'user', content: 'go' }];
    expect(await ask(opening)).toBe('first');
    expect(await ask(opening)).toBe('first');
    expect(
      await ask([...opening, { role: 'assistant', content: 'first' }, { role: 'user', content: 'on' }]),
    ).toBe('second');
    const past = await post(`${url}/v1/messages`, {
      model: 'm',
      max_tokens: 10,
      messages: [...opening, { role: 'assistant', content: 'a' }, { role: 'assistant', content: 'b' }],
    });
    expect(past.status).toBe(500);
    expect(() => parseReplayScript('per_conversation: yes-please\nturns: [{text: x}]')).toThrow(
      /per_conversation/,
    );
  });
});
