import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import {
  createSinks,
  FanOut,
  FileSink,
  MAX_BACKOFF_MS,
  NullSink,
  reconnectDelayMs,
  resolveFileSinkPath,
  type SinkContext,
  type SinkEvent,
  type StreamSink,
  WebSocketSink,
} from '../src/streaming/sinks.js';
import { tempDirs } from './persist-helpers.js';

const THREAD = 'acme/build/build-1739820456123';
const dirs = tempDirs();
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await dirs.cleanup();
});

function event(data: string, turn = 1, at = 1_739_820_456_123): SinkEvent {
  return { threadId: THREAD, turn, data, at };
}

/** SSE payloads as a provider sends them, ending with the literal `[DONE]`. */
function payloads(n: number): string[] {
  const out = Array.from({ length: n }, (_, i) =>
    JSON.stringify({ type: 'content_block_delta', delta: { type: 'text_delta', text: `chunk ${i} ✓` } }),
  );
  out.push('[DONE]');
  return out;
}

function context(threadDir: string, env: Record<string, string | undefined> = {}) {
  const warnings: string[] = [];
  const ctx: SinkContext = { threadId: THREAD, threadDir, env, warn: (m) => warnings.push(m) };
  return { ctx, warnings };
}

async function until(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** A port nothing listens on (just released by the OS). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface UiServer {
  url: string;
  /** Every message received, parsed, across all connections, in arrival order. */
  messages: Array<{ thread_id: string; turn: number; data: string; timestamp: number }>;
  connections: WebSocket[];
}

/** A real `ws` server on 127.0.0.1 that records what it receives. */
async function uiServer(port = 0): Promise<UiServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  const server: UiServer = {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}/events`,
    messages: [],
    connections: [],
  };
  wss.on('connection', (socket) => {
    server.connections.push(socket);
    socket.on('message', (raw) => server.messages.push(JSON.parse(String(raw))));
  });
  cleanups.push(async () => {
    for (const socket of wss.clients) socket.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  return server;
}

function wsSink(url: string, options: Partial<ConstructorParameters<typeof WebSocketSink>[0]> = {}) {
  const warnings: string[] = [];
  const sink = new WebSocketSink({ url, warn: (m) => warnings.push(m), ...options });
  cleanups.push(() => sink.close());
  return { sink, warnings };
}

describe('FileSink', () => {
  it('appends one JSON line per event with the raw data, in order, to a 0600 file', async () => {
    const dir = await dirs.make('rye-sinks-');
    const { ctx, warnings } = context(dir);
    writeFileSync(join(dir, 'sse-stream.jsonl'), '{"earlier":true}\n', { mode: 0o600 });
    const [sink] = createSinks([{ type: 'file' }], ctx);
    expect(sink).toBeInstanceOf(FileSink);
    const data = payloads(500);
    data.forEach((d, i) => {
      sink!.write(event(d, 1 + Math.floor(i / 100), 1_739_820_456_123 + i));
    });
    await sink!.close();

    const lines = readFileSync(join(dir, 'sse-stream.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('{"earlier":true}');
    const records = lines.slice(1).map((line) => JSON.parse(line));
    expect(records.map((r) => r.data)).toEqual(data);
    expect(Object.keys(records[0])).toEqual(['timestamp', 'thread_id', 'turn', 'data']);
    expect(records[0]).toEqual({ timestamp: 1_739_820_456.123, thread_id: THREAD, turn: 1, data: data[0] });
    expect(records.at(-1)).toMatchObject({ turn: 6, data: '[DONE]' });
    expect(warnings).toEqual([]);

    const fresh = await dirs.make('rye-sinks-');
    const created = new FileSink({ path: join(fresh, 'a', 'b.jsonl'), root: fresh, warn: () => {} });
    created.write(event('x'));
    await created.close();
    expect(statSync(join(fresh, 'a', 'b.jsonl')).mode & 0o777).toBe(0o600);
  });

  it('puts {thread_id} paths under the thread directory and ignores writes after close', async () => {
    const dir = await dirs.make('rye-sinks-');
    const { ctx } = context(dir);
    const [sink] = createSinks([{ type: 'file', path: 'streams/{thread_id}.jsonl', format: 'jsonl' }], ctx);
    sink!.write(event('one'));
    await sink!.close();
    sink!.write(event('late'));
    await sink!.close();
    const lines = readFileSync(join(dir, 'streams', `${THREAD}.jsonl`), 'utf8')
      .trimEnd()
      .split('\n');
    expect(lines.map((l) => JSON.parse(l).data)).toEqual(['one']);
  });

  it('refuses absolute paths and ".." at configuration time', async () => {
    const dir = await dirs.make('rye-sinks-');
    const { ctx, warnings } = context(dir);
    const sinks = createSinks(
      [
        { type: 'file', path: '/etc/passwd-stream.jsonl' },
        { type: 'file', path: '../escape.jsonl' },
        { type: 'file', path: 'a/../../escape.jsonl' },
        { type: 'file', path: 'C:\\x.jsonl' },
        { type: 'file', path: 42 },
        { type: 'file', format: 'csv' },
      ],
      ctx,
    );
    expect(sinks).toEqual([]);
    expect(warnings).toHaveLength(6);
    expect(warnings[0]).toMatch(/^stream\.sinks\[0\] \(file\): .*is absolute; skipped$/);
    expect(warnings[1]).toMatch(/climbs out/);
    expect(() => resolveFileSinkPath('..', dir, THREAD)).toThrow(/climbs out/);
    expect(() => resolveFileSinkPath('{thread_id}', dir, '../x')).toThrow(/climbs out/);
    expect(resolveFileSinkPath(undefined, dir, THREAD)).toBe(join(dir, 'sse-stream.jsonl'));
  });

  it('becomes a no-op when a symlink leads out of the thread directory', async () => {
    const dir = await dirs.make('rye-sinks-');
    const outside = await dirs.make('rye-outside-');
    symlinkSync(outside, join(dir, 'out'));
    writeFileSync(join(outside, 'target.jsonl'), '');
    symlinkSync(join(outside, 'target.jsonl'), join(dir, 'sse-stream.jsonl'));
    const { ctx, warnings } = context(dir);
    const [viaDir, viaFile] = createSinks(
      [{ type: 'file', path: 'out/deep/x.jsonl' }, { type: 'file' }],
      ctx,
    );
    for (const d of payloads(3)) {
      viaDir!.write(event(d));
      viaFile!.write(event(d));
    }
    await Promise.all([viaDir!.close(), viaFile!.close()]);
    expect(existsSync(join(outside, 'deep'))).toBe(false);
    expect(readFileSync(join(outside, 'target.jsonl'), 'utf8')).toBe('');
    expect(warnings).toHaveLength(2);
    expect(warnings.every((w) => /outside the thread directory.*disabled/.test(w))).toBe(true);
  });

  it('drops events beyond its memory bound and warns once; disk errors warn once and never throw', async () => {
    const dir = await dirs.make('rye-sinks-');
    const warnings: string[] = [];
    const sink = new FileSink({
      path: join(dir, 'small.jsonl'),
      root: dir,
      warn: (m) => warnings.push(m),
      maxPendingBytes: 1_000,
    });
    for (let i = 0; i < 100; i++) sink.write(event(`event ${i}`));
    await sink.close();
    const kept = readFileSync(join(dir, 'small.jsonl'), 'utf8').trimEnd().split('\n');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(100);
    expect(kept.map((l) => JSON.parse(l).data)).toEqual(kept.map((_, i) => `event ${i}`));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/dropping events/);

    writeFileSync(join(dir, 'not-a-dir'), '');
    const broken: string[] = [];
    const bad = new FileSink({
      path: join(dir, 'not-a-dir', 'x.jsonl'),
      root: dir,
      warn: (m) => broken.push(m),
    });
    bad.write(event('a'));
    await until(() => broken.length > 0);
    expect(() => bad.write(event('b'))).not.toThrow();
    await bad.close();
    expect(broken).toHaveLength(1);
    expect(broken[0]).toMatch(/disabled/);
  });
});

describe('WebSocketSink', () => {
  it('sends each event as a JSON text message, in order', async () => {
    const server = await uiServer();
    const { sink, warnings } = wsSink(server.url);
    const data = payloads(200);
    data.forEach((d, i) => {
      sink.write(event(d, 2, 1_739_820_456_000 + i));
    });
    await until(() => server.messages.length === data.length);
    await sink.close();
    expect(server.messages.map((m) => m.data)).toEqual(data);
    expect(Object.keys(server.messages[0]!)).toEqual(['thread_id', 'turn', 'data', 'timestamp']);
    expect(server.messages[0]).toEqual({
      thread_id: THREAD,
      turn: 2,
      data: data[0],
      timestamp: 1_739_820_456,
    });
    expect(server.connections).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('buffers while the server is not listening yet, then delivers in order', async () => {
    const port = await freePort();
    const { sink, warnings } = wsSink(`ws://127.0.0.1:${port}/events`);
    sink.write(event('early 1'));
    sink.write(event('early 2'));
    sink.write(event('early 3'));
    await sleep(20); // the first attempt is refused
    const server = await uiServer(port);
    await until(() => server.messages.length === 3);
    sink.write(event('later'));
    await until(() => server.messages.length === 4);
    expect(server.messages.map((m) => m.data)).toEqual(['early 1', 'early 2', 'early 3', 'later']);
    expect(warnings).toEqual([]);
  });

  it('keeps only the newest buffer_max events while disconnected', async () => {
    const port = await freePort();
    const { sink, warnings } = wsSink(`ws://127.0.0.1:${port}/events`, { bufferMax: 2 });
    for (let i = 1; i <= 5; i++) sink.write(event(`e${i}`));
    const server = await uiServer(port);
    await until(() => server.messages.length === 2);
    expect(server.messages.map((m) => m.data)).toEqual(['e4', 'e5']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/buffer is full/);
  });

  it('drops instead of buffering when buffer_on_disconnect is false', async () => {
    const server = await uiServer();
    const { sink } = wsSink(server.url, { bufferOnDisconnect: false });
    sink.write(event('while connecting'));
    for (let i = 0; server.messages.length === 0; i++) {
      sink.write(event(`after ${i}`));
      await sleep(10);
    }
    expect(server.messages.map((m) => m.data)).not.toContain('while connecting');
  });

  it('reconnects after the server drops the connection', async () => {
    const server = await uiServer();
    const { sink, warnings } = wsSink(server.url);
    sink.write(event('a'));
    sink.write(event('b'));
    await until(() => server.messages.length === 2);
    server.connections[0]!.terminate();
    await until(() => server.connections.length === 2);
    sink.write(event('c'));
    sink.write(event('d'));
    await until(() => server.messages.length === 4);
    await sink.close();
    expect(server.messages.map((m) => m.data)).toEqual(['a', 'b', 'c', 'd']);
    expect(warnings).toEqual([]);
  });

  it('gives up after reconnect_attempts when nothing listens, then is a no-op that closes at once', async () => {
    const port = await freePort();
    const { sink, warnings } = wsSink(`ws://user:secret@127.0.0.1:${port}/events?token=t0k`, {
      reconnectAttempts: 2,
    });
    const started = Date.now();
    sink.write(event('lost'));
    await until(() => warnings.length > 0);
    // Two reconnects, after 100 ms and 200 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/giving up, 3 connection attempt\(s\) in a row failed/);
    expect(warnings[0]).not.toMatch(/secret|t0k/);
    sink.write(event('ignored'));
    const closing = Date.now();
    await sink.close();
    expect(Date.now() - closing).toBeLessThan(100);
    expect(warnings).toHaveLength(1);
  });

  it('does not hang on a server that accepts TCP but never answers', async () => {
    const sockets: Socket[] = [];
    let ended = 0;
    // Reads (and ignores) the upgrade request, never answers.
    const silent: Server = createServer((socket) => {
      sockets.push(socket);
      socket.on('close', () => ended++).resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const port = (silent.address() as { port: number }).port;
    const { sink } = wsSink(`ws://127.0.0.1:${port}/events`, {
      connectTimeoutMs: 5_000,
      closeTimeoutMs: 300,
    });
    sink.write(event('waiting'));
    await until(() => sockets.length === 1);
    const closing = Date.now();
    await sink.close();
    expect(Date.now() - closing).toBeLessThan(1_000);
    // The sink hung up rather than leaving the connection open.
    await until(() => ended === 1);

    const timed = wsSink(`ws://127.0.0.1:${port}/events`, { connectTimeoutMs: 150, reconnectAttempts: 0 });
    timed.sink.write(event('waiting'));
    await until(() => timed.warnings.length > 0);
    expect(timed.warnings[0]).toMatch(/giving up, 1 connection attempt\(s\) in a row failed/);
  });
});

describe('FanOut', () => {
  function recorder(kind = 'recorder') {
    const seen: string[] = [];
    let closed = false;
    const sink: StreamSink = {
      kind,
      write: (e) => {
        seen.push(e.data);
      },
      close: async () => {
        closed = true;
      },
    };
    return { sink, seen, isClosed: () => closed };
  }

  it('disables a throwing sink after one warning; the others keep receiving everything', async () => {
    let calls = 0;
    const thrower: StreamSink = {
      kind: 'custom',
      write: () => {
        calls++;
        throw new Error('boom');
      },
      close: () => Promise.reject(new Error('close boom')),
    };
    const asyncThrower = {
      kind: 'async',
      write: async () => {
        throw new Error('async boom');
      },
      close: async () => {},
    } as unknown as StreamSink;
    const a = recorder('a');
    const b = recorder('b');
    const warnings: string[] = [];
    const fanOut = new FanOut([a.sink, thrower, asyncThrower, new NullSink(), b.sink], (m) =>
      warnings.push(m),
    );
    for (const d of payloads(3)) expect(() => fanOut.write(event(d))).not.toThrow();
    await sleep(0);
    fanOut.write(event('after'));
    await fanOut.close();
    expect(a.seen).toEqual([...payloads(3), 'after']);
    expect(b.seen).toEqual(a.seen);
    expect(calls).toBe(1);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/"custom" failed and is disabled for the rest of the stream: boom/);
    expect(warnings[1]).toMatch(/"async" failed .*async boom/);
    expect(a.isClosed() && b.isClosed()).toBe(true);
    fanOut.write(event('after close'));
    expect(a.seen.at(-1)).toBe('after');
  });

  it('feeds real file and websocket sinks side by side', async () => {
    const dir = await dirs.make('rye-sinks-');
    const server = await uiServer();
    const { ctx, warnings } = context(dir, { UI: server.url });
    const sinks = createSinks([{ type: 'file' }, { type: 'websocket', url: '${UI}' }, { type: 'null' }], ctx);
    const fanOut = new FanOut(sinks, ctx.warn);
    const data = payloads(20);
    for (const d of data) fanOut.write(event(d));
    await until(() => server.messages.length === data.length);
    await fanOut.close();
    const lines = readFileSync(join(dir, 'sse-stream.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).data)).toEqual(data);
    expect(server.messages.map((m) => m.data)).toEqual(data);
    expect(warnings).toEqual([]);
  });
});

describe('createSinks', () => {
  it('warns about and skips unknown, internal and invalid entries, never throwing', () => {
    const { ctx, warnings } = context('/nonexistent/thread');
    const sinks = createSinks(
      [
        { type: 'kafka' },
        { type: 'transcript' },
        { type: 'websocket', url: 'http://localhost:8080/events' },
        { type: 'websocket' },
        { type: 'websocket', url: 'not a url' },
        { type: 'websocket', url: 'ws://localhost:1/x', reconnect_attempts: -1 },
        { type: 'websocket', url: 'ws://localhost:1/x', buffer_on_disconnect: 'yes' },
        'file' as unknown as { type: string },
        { type: 'null' },
      ],
      ctx,
    );
    expect(sinks).toHaveLength(1);
    expect(sinks[0]).toBeInstanceOf(NullSink);
    expect(warnings).toHaveLength(8);
    expect(warnings[0]).toBe(
      'stream.sinks[0] has unknown type "kafka" (known: file, websocket, null); skipped',
    );
    expect(warnings[1]).toMatch(/^stream\.sinks\[1\] \(transcript\) is built in/);
    expect(warnings[2]).toMatch(/ws:\/\/ or wss:\/\/, got http:/);
    expect(warnings[3]).toMatch(/url is required/);
    expect(warnings[4]).toMatch(/is not a URL/);
    expect(warnings[5]).toMatch(/reconnect_attempts must be an integer/);
    expect(warnings[6]).toMatch(/buffer_on_disconnect must be true or false/);
    expect(warnings[7]).toMatch(/is not a mapping/);
    expect(createSinks(undefined, ctx)).toEqual([]);
  });

  it('expands ${VAR} and ${VAR:-default} in the websocket url from the context env', () => {
    const url = '${THREAD_UI_WEBSOCKET_URL:-ws://localhost:8080/events}';
    const fallback = createSinks([{ type: 'websocket', url }], context('/t').ctx);
    expect((fallback[0] as WebSocketSink).url).toBe('ws://localhost:8080/events');
    const set = createSinks(
      [{ type: 'websocket', url, reconnect_attempts: 0, buffer_max: 10 }],
      context('/t', { THREAD_UI_WEBSOCKET_URL: 'wss://ui.example/stream' }).ctx,
    );
    expect((set[0] as WebSocketSink).url).toBe('wss://ui.example/stream');
    const { ctx, warnings } = context('/t', { HOST: '127.0.0.1' });
    expect((createSinks([{ type: 'websocket', url: 'ws://${HOST}:9/e' }], ctx)[0] as WebSocketSink).url).toBe(
      'ws://127.0.0.1:9/e',
    );
    // An unset variable without a default leaves no usable url.
    expect(createSinks([{ type: 'websocket', url: '${UNSET_UI_URL}' }], ctx)).toEqual([]);
    expect(warnings).toHaveLength(1);
  });
});

describe('reconnect backoff (issue 28 point 16)', () => {
  it('doubles from its base and stops at MAX_BACKOFF_MS however many attempts are allowed', () => {
    expect([1, 2, 3, 4].map((n) => reconnectDelayMs(100, n))).toEqual([100, 200, 400, 800]);
    expect(reconnectDelayMs(100, 100)).toBe(MAX_BACKOFF_MS);
    expect(MAX_BACKOFF_MS).toBe(5_000);
  });
});
