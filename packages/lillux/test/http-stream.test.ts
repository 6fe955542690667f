import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isRyeError } from '../src/errors.js';
import {
  callbackSink,
  type EventSink,
  fileSink,
  httpStream,
  ReturnSink,
  type SseEvent,
} from '../src/http/index.js';
import {
  chunkBytes,
  closedPort,
  FEATURE_EVENTS,
  FEATURE_STREAM,
  json,
  splitBytes,
  sse,
  sseEvent,
  startServer,
  status,
  type TestServer,
} from './helpers/http-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(routes: Parameters<typeof startServer>[0]): Promise<TestServer> {
  server = await startServer(routes);
  return server;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lillux-http-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Anthropic-like events, one chunk each. */
function anthropicChunks(n: number): string[] {
  const chunks = [
    sseEvent({ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1"}}' }),
  ];
  for (let i = 0; i < n; i++) {
    chunks.push(
      sseEvent({
        event: 'content_block_delta',
        data: JSON.stringify({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: `t${i}` },
        }),
      }),
    );
  }
  chunks.push(sseEvent({ event: 'message_stop', data: '{"type":"message_stop"}' }));
  return chunks;
}

/** A sink that records events and whether it was closed. */
function recorder(name = 'rec'): EventSink & { got: SseEvent[]; closed: number; times: number[] } {
  const sink = {
    name,
    got: [] as SseEvent[],
    times: [] as number[],
    closed: 0,
    write(e: SseEvent) {
      sink.got.push(e);
      sink.times.push(performance.now());
    },
    close() {
      sink.closed++;
    },
  };
  return sink;
}

describe('httpStream: parsing over HTTP', () => {
  it('streams provider-like events into the result', async () => {
    const s = await serve({ 'POST /v1/messages': sse(anthropicChunks(5), { chunkDelayMs: 2 }) });
    const r = await httpStream({ url: `${s.url}/v1/messages`, method: 'POST', body: { stream: true } });
    expect(r).toMatchObject({
      success: true,
      status: 200,
      attempts: 1,
      stream_events_count: 7,
      stream_destinations: ['return'],
      sink_errors: [],
    });
    expect(r.error).toBeUndefined();
    expect('body' in r).toBe(false);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.events.map((e) => e.event)).toEqual([
      'message_start',
      ...Array(5).fill('content_block_delta'),
      'message_stop',
    ]);
    expect(JSON.parse(r.events[3]!.data)).toMatchObject({ delta: { text: 't2' } });
    expect(s.requests[0]!.body).toBe('{"stream":true}');
  });

  it('gives identical events for every split point of the feature stream', async () => {
    const bytes = new TextEncoder().encode(FEATURE_STREAM);
    const s = await serve({
      '/s': (req) =>
        sse(splitBytes(bytes, [Number(new URL(req.url, 'http://x').searchParams.get('cut'))]), {
          chunkDelayMs: 1,
        }),
    });
    for (let cut = 1; cut < bytes.length; cut++) {
      const r = await httpStream({ url: `${s.url}/s?cut=${cut}` });
      expect(r.success, `cut ${cut}`).toBe(true);
      expect(r.events, `cut ${cut}`).toEqual(FEATURE_EVENTS);
    }
  });

  it('gives identical events one byte per chunk', async () => {
    const s = await serve({ '/s': sse(chunkBytes(FEATURE_STREAM, 1)) });
    const r = await httpStream({ url: `${s.url}/s` });
    expect(r.events).toEqual(FEATURE_EVENTS);
    expect(r.stream_events_count).toBe(FEATURE_EVENTS.length);
  });

  it('reads a non-2xx response whole and reports it like httpRequest', async () => {
    const s = await serve({
      '/s': json({ type: 'error', error: { type: 'invalid_request_error' } }, { status: 400 }),
    });
    const sink = recorder();
    const r = await httpStream({ url: `${s.url}/s`, retries: 2, baseDelayMs: 5, sinks: [sink] });
    expect(r).toMatchObject({
      success: false,
      status: 400,
      attempts: 1,
      error: 'HTTP 400: Bad Request',
      json: { type: 'error', error: { type: 'invalid_request_error' } },
      events: [],
      stream_events_count: 0,
    });
    expect(r.body).toContain('invalid_request_error');
    expect(sink.closed).toBe(1);
  });

  it('retries 503 and 429 before streaming', async () => {
    const s = await serve({
      '/s': [status(503), status(429, { headers: { 'retry-after': '0' } }), sse(anthropicChunks(2))],
    });
    const r = await httpStream({ url: `${s.url}/s`, retries: 3, baseDelayMs: 10 });
    expect(r).toMatchObject({ success: true, attempts: 3, stream_events_count: 4 });
  });

  it('reports an exhausted 529 like httpRequest', async () => {
    const s = await serve({
      '/s': status(529, { statusText: 'Overloaded', body: '{"error":"overloaded"}' }),
    });
    const r = await httpStream({ url: `${s.url}/s`, retries: 1, baseDelayMs: 5 });
    expect(r).toMatchObject({
      success: false,
      status: 529,
      attempts: 2,
      error: 'HTTP 529: Overloaded',
      json: { error: 'overloaded' },
    });
  });

  it('reports a refused connection with status 0', async () => {
    const port = await closedPort();
    const sink = recorder();
    const r = await httpStream({
      url: `http://127.0.0.1:${port}/`,
      retries: 1,
      baseDelayMs: 5,
      sinks: [sink],
    });
    expect(r).toMatchObject({ success: false, status: 0, attempts: 2, events: [], stream_events_count: 0 });
    expect(r.error).toMatch(/^Request failed after 2 attempts: .*ECONNREFUSED/);
    expect(sink.closed).toBe(1);
  });
});

describe('httpStream: broken streams', () => {
  it('returns the events that arrived when the socket is destroyed mid-stream', async () => {
    const chunks = anthropicChunks(10);
    const s = await serve({ '/s': sse(chunks, { chunkDelayMs: 2, destroyAfter: 4 }) });
    const sink = recorder();
    const r = await httpStream({ url: `${s.url}/s`, sinks: [sink], retries: 3 });
    expect(r.success).toBe(false);
    expect(r.status).toBe(200);
    expect(r.attempts).toBe(1);
    expect(r.stream_events_count).toBe(4);
    expect(r.events).toHaveLength(4);
    expect(sink.got).toHaveLength(4);
    expect(r.error).toMatch(/^Stream broke after 4 events: /);
    expect(sink.closed).toBe(1);
    expect(s.requests).toHaveLength(1);
  });

  it('drops a half-received event when the stream breaks inside it', async () => {
    const s = await serve({
      '/s': sse(['data: whole\n\n', 'event: delta\ndata: {"half":'], { destroyAfter: 2, chunkDelayMs: 5 }),
    });
    const r = await httpStream({ url: `${s.url}/s` });
    expect(r.events).toEqual([{ event: 'message', data: 'whole' }]);
    expect(r.error).toMatch(/^Stream broke after 1 events: /);
  });

  it('applies timeoutMs to the gaps between chunks', async () => {
    const s = await serve({
      '/s': sse(['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n'], { chunkDelayMs: [50, 3000] }),
    });
    const r = await httpStream({ url: `${s.url}/s`, timeoutMs: 300 });
    // The 50 ms gap is fine; the 3 s gap is not: without an idle timeout the third event would
    // arrive (told by the events, not by a clock that load can stretch).
    expect(r.events.map((e) => e.data)).toEqual(['1', '2']);
    expect(r.error).toBe('Stream broke after 2 events: Timed out after 300 ms without data');
    expect(r.success).toBe(false);
  });

  it('stops when the caller aborts mid-stream', async () => {
    const s = await serve({ '/s': sse(['data: 1\n\n', 'data: 2\n\n'], { chunkDelayMs: 5000 }) });
    const controller = new AbortController();
    const sink = callbackSink('abort-on-first', () => controller.abort());
    const r = await httpStream({ url: `${s.url}/s`, sinks: [sink], signal: controller.signal });
    expect(r.events).toHaveLength(1);
    // Ignored, the abort would leave the stream to deliver its second event 5 s later.
    expect(r.error).toBe('Stream broke after 1 events: Aborted by caller');
  });
});

describe('httpStream: sinks', () => {
  it('a throwing sink and an async-rejecting sink do not affect the others', async () => {
    const s = await serve({ '/s': sse(anthropicChunks(8), { chunkDelayMs: 1 }) });
    const before = recorder('before');
    const after = recorder('after');
    let thrown = 0;
    const thrower = callbackSink('thrower', () => {
      thrown++;
      throw new Error('sync boom');
    });
    let rejectCalls = 0;
    const rejecter: EventSink = {
      name: 'rejecter',
      async write() {
        rejectCalls++;
        await new Promise((resolve) => setTimeout(resolve, 1));
        throw new Error('async boom');
      },
      close: () => Promise.reject(new Error('close boom')),
    };
    const r = await httpStream({ url: `${s.url}/s`, sinks: [before, thrower, rejecter, after] });
    expect(r.success).toBe(true);
    expect(r.stream_events_count).toBe(10);
    expect(r.events).toHaveLength(10);
    expect(before.got).toEqual(r.events);
    expect(after.got).toEqual(r.events);
    expect(thrown).toBe(10);
    expect(rejectCalls).toBe(10);
    expect(r.stream_destinations).toEqual(['return', 'before', 'thrower', 'rejecter', 'after']);
    expect(r.sink_errors).toEqual([
      { sink: 'thrower', error: 'sync boom (+9 more)' },
      { sink: 'rejecter', error: 'async boom (+10 more)' },
    ]);
    expect(before.closed).toBe(1);
    expect(after.closed).toBe(1);
  });

  it('writes to a slow async sink in order and waits for it to drain', async () => {
    const s = await serve({ '/s': sse(anthropicChunks(20)) });
    const got: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = callbackSink('slow', async (e) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      got.push(e.data);
      inFlight--;
    });
    const r = await httpStream({ url: `${s.url}/s`, sinks: [slow] });
    expect(r.sink_errors).toEqual([]);
    expect(got).toEqual(r.events.map((e) => e.data));
    expect(maxInFlight).toBe(1);
  });

  it('a stalled sink neither delays the others nor the result beyond sinkCloseTimeoutMs', async () => {
    const s = await serve({ '/s': sse(anthropicChunks(5), { chunkDelayMs: 40 }) });
    const good = recorder('good');
    let stalledWrites = 0;
    let stalledClosed = 0;
    const stalled: EventSink = {
      name: 'stalled',
      write: () => {
        stalledWrites++;
        return new Promise<void>(() => {});
      },
      close: () => {
        stalledClosed++;
      },
    };
    const started = performance.now();
    const r = await httpStream({ url: `${s.url}/s`, sinks: [stalled, good], sinkCloseTimeoutMs: 200 });
    const elapsed = performance.now() - started;
    expect(r.success).toBe(true);
    expect(good.got).toHaveLength(7);
    // The good sink saw events as they arrived (the stream took ~240 ms), not all at the end.
    expect(good.times.at(-1)! - good.times[0]!).toBeGreaterThan(150);
    expect(stalledWrites).toBe(1);
    expect(stalledClosed).toBe(1);
    expect(r.sink_errors).toEqual([{ sink: 'stalled', error: 'stalled: did not drain within 200 ms' }]);
    expect(elapsed).toBeGreaterThanOrEqual(200 + 150);
    // A sink that is never drained would hold the stream forever: far below that, whatever the load.
    expect(elapsed).toBeLessThan(15_000);
  });

  it('a sink whose close never settles is abandoned', async () => {
    const s = await serve({ '/s': sse(['data: x\n\n']) });
    const sink: EventSink = { name: 'sticky', write() {}, close: () => new Promise<void>(() => {}) };
    const r = await httpStream({ url: `${s.url}/s`, sinks: [sink], sinkCloseTimeoutMs: 50 });
    expect(r.success).toBe(true);
    expect(r.sink_errors).toEqual([{ sink: 'sticky', error: 'stalled: did not close within 50 ms' }]);
  });

  it('fileSink appends valid JSONL, one line per event, creating parent dirs', async () => {
    const s = await serve({ '/s': sse([FEATURE_STREAM]) });
    const path = join(dir, 'nested', 'deeper', 'events.jsonl');
    const first = await httpStream({ url: `${s.url}/s`, sinks: [fileSink(path)] });
    expect(first.sink_errors).toEqual([]);
    expect(first.stream_destinations).toEqual(['return', `file:${path}`]);
    const second = await httpStream({ url: `${s.url}/s`, sinks: [fileSink(path)] });
    expect(second.success).toBe(true);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    const parsed = lines.map((line) => JSON.parse(line) as unknown);
    expect(parsed).toEqual([...FEATURE_EVENTS, ...FEATURE_EVENTS]);
    expect(lines[1]).toBe(JSON.stringify({ event: 'message', data: 'line one\nline two\n' }));
  });

  it('fileSink reports an unwritable path without breaking the stream', async () => {
    const s = await serve({ '/s': sse(anthropicChunks(2)) });
    const blocker = join(dir, 'a-file');
    await import('node:fs/promises').then((fs) => fs.writeFile(blocker, 'x'));
    const r = await httpStream({ url: `${s.url}/s`, sinks: [fileSink(join(blocker, 'sub', 'e.jsonl'))] });
    expect(r.success).toBe(true);
    expect(r.events).toHaveLength(4);
    expect(r.sink_errors).toHaveLength(1);
    expect(r.sink_errors[0]!.error).toMatch(/EEXIST|ENOTDIR/);
  });

  it('ReturnSink keeps the first maxEvents and counts the rest', async () => {
    const s = await serve({ '/s': sse(anthropicChunks(8)) });
    const returnSink = new ReturnSink(3);
    const r = await httpStream({ url: `${s.url}/s`, returnSink });
    expect(r.stream_events_count).toBe(10);
    expect(r.events).toHaveLength(3);
    expect(r.events).toBe(returnSink.events);
    expect(r.events[0]!.event).toBe('message_start');
    expect(returnSink.dropped).toBe(7);
    expect(r.success).toBe(true);
  });

  it('ReturnSink defaults to 10 000 events', () => {
    const sink = new ReturnSink();
    for (let i = 0; i < 10_005; i++) sink.write({ event: 'message', data: String(i) });
    expect(sink.events).toHaveLength(10_000);
    expect(sink.dropped).toBe(5);
    expect(sink.name).toBe('return');
  });

  it('rejects bad sink options with VALIDATION', async () => {
    const bad: unknown[] = [
      { url: 'http://127.0.0.1:1/', sinks: 'nope' },
      { url: 'http://127.0.0.1:1/', sinks: [{ name: 'x' }] },
      { url: 'http://127.0.0.1:1/', sinkCloseTimeoutMs: -5 },
      { url: 'http://127.0.0.1:1/', method: 'TRACE' },
    ];
    for (const options of bad) {
      const error: unknown = await httpStream(options as never).catch((e: unknown) => e);
      expect(isRyeError(error) && error.code === 'VALIDATION', JSON.stringify(options)).toBe(true);
    }
    expect(() => new ReturnSink(-1)).toThrow(/maxEvents/);
    expect(() => fileSink('')).toThrow(/path/);
    expect(() => callbackSink('x', 'nope' as never)).toThrow(/function/);
  });
});
