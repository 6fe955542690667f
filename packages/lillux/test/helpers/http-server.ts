/**
 * A scripted HTTP server on 127.0.0.1 (random port) for tests that need real sockets: JSON and text
 * replies, bare statuses with headers, SSE streams sent as raw chunks (strings or bytes, split anywhere)
 * with delays, sockets destroyed mid-stream, and requests that never get an answer.
 *
 *   const server = await startServer({
 *     'GET /ok': json({ hello: 'world' }),
 *     'POST /flaky': [status(503), status(503), json({ ok: true })],   // one reply per call, last repeats
 *     '/stream': sse([sseEvent({ event: 'ping', data: '{}' })], { chunkDelayMs: 5 }),
 *     '/custom': (req) => (req.headers['x-key'] ? json({}) : status(401)),
 *   });
 *   await httpRequest({ url: `${server.url}/ok` });
 *   server.requests; // every request, with its body
 *   await server.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Path and query as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `performance.now()` when the request arrived. */
  at: number;
}

interface Common {
  status?: number;
  statusText?: string;
  headers?: Record<string, string>;
  /** Wait this long before sending anything (response headers included). */
  waitMs?: number;
}

export type Reply =
  | (Common & { type: 'body'; body: string | Uint8Array })
  | (Common & {
      type: 'chunks';
      chunks: readonly (string | Uint8Array)[];
      /** Delay before each chunk after the first: one number for all, or one per gap. */
      chunkDelayMs?: number | readonly number[];
      /** Destroy the socket after writing this many chunks instead of ending the response. */
      destroyAfter?: number;
    })
  | { type: 'destroy'; waitMs?: number }
  | { type: 'hang' };

export interface HandlerContext {
  res: ServerResponse;
  /** 0-based call count of this route. */
  call: number;
}

/** Return a reply, or nothing when the handler wrote to `ctx.res` itself. */
export type Handler = (
  req: RecordedRequest,
  ctx: HandlerContext,
) => Reply | undefined | Promise<Reply | undefined>;

/** A fixed reply, a sequence (one per call, the last repeats) or a handler. */
export type Route = Reply | readonly Reply[] | Handler;

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests whose path (or `METHOD path`) matches `key`. */
  hits(key: string): RecordedRequest[];
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Reply builders

export function json(body: unknown, opts: Common = {}): Reply {
  return {
    ...opts,
    type: 'body',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...opts.headers },
  };
}

export function text(body: string | Uint8Array, opts: Common = {}): Reply {
  return {
    ...opts,
    type: 'body',
    body,
    headers: { 'content-type': 'text/plain; charset=utf-8', ...opts.headers },
  };
}

/** A bare status with optional headers and body, e.g. `status(429, { headers: { 'retry-after': '1' } })`. */
export function status(code: number, opts: Omit<Common, 'status'> & { body?: string } = {}): Reply {
  return { ...opts, type: 'body', status: code, body: opts.body ?? '' };
}

export interface SseReplyOptions extends Common {
  chunkDelayMs?: number | readonly number[];
  destroyAfter?: number;
}

/** An SSE response sent as exactly these raw chunks. */
export function sse(chunks: readonly (string | Uint8Array)[], opts: SseReplyOptions = {}): Reply {
  return {
    ...opts,
    type: 'chunks',
    chunks,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...opts.headers },
  };
}

/** Destroys the socket without answering (the client sees a reset / "other side closed"). */
export function destroy(waitMs?: number): Reply {
  return waitMs === undefined ? { type: 'destroy' } : { type: 'destroy', waitMs };
}

/** Never answers (until the server closes). */
export function hang(): Reply {
  return { type: 'hang' };
}

// ---------------------------------------------------------------------------------------------
// SSE text helpers

/** Formats one event the way a server would: `event:`, `id:`, one `data:` line per line, blank line. */
export function sseEvent(e: { event?: string; data: string; id?: string }, eol = '\n'): string {
  let out = '';
  if (e.event !== undefined) out += `event: ${e.event}${eol}`;
  if (e.id !== undefined) out += `id: ${e.id}${eol}`;
  for (const line of e.data.split('\n')) out += `data: ${line}${eol}`;
  return out + eol;
}

/** Comments, retry, event names, ids, multi-line data, LF / CRLF / CR line ends, multi-byte UTF-8. */
export const FEATURE_STREAM =
  ': this is a comment\n' +
  'retry: 1000\n' +
  'event: message_start\n' +
  'id: 1\n' +
  'data: {"type":"message_start"}\n' +
  '\n' +
  'data: line one\r\n' +
  'data: line two\r\n' +
  'data:\r\n' +
  '\r\n' +
  'event: delta\r\n' +
  'id: 2\r\n' +
  'data: héllo wörld — 日本語 😀\r\n' +
  '\r\n' +
  ':keep-alive\r\n' +
  '\r\n' +
  'data:no-space\n' +
  'data\n' +
  '\n' +
  'event: cr-only\rdata: cr\rdata: lines 🎉\r\r' +
  'event: ping\ndata: {}\n\n' +
  'data: last\n\n';

export const FEATURE_EVENTS: { event: string; data: string; id?: string }[] = [
  { event: 'message_start', id: '1', data: '{"type":"message_start"}' },
  { event: 'message', data: 'line one\nline two\n' },
  { event: 'delta', id: '2', data: 'héllo wörld — 日本語 😀' },
  { event: 'message', data: 'no-space\n' },
  { event: 'cr-only', data: 'cr\nlines 🎉' },
  { event: 'ping', data: '{}' },
  { event: 'message', data: 'last' },
];

const encoder = new TextEncoder();

/** UTF-8 bytes of `text` cut at the given byte offsets (which may fall inside a character). */
export function splitBytes(text: string | Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const bytes = typeof text === 'string' ? encoder.encode(text) : text;
  const sorted = [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const cut of sorted) {
    out.push(bytes.subarray(start, cut));
    start = cut;
  }
  out.push(bytes.subarray(start));
  return out;
}

/** UTF-8 bytes of `text` in pieces of `size` bytes. */
export function chunkBytes(text: string | Uint8Array, size: number): Uint8Array[] {
  const bytes = typeof text === 'string' ? encoder.encode(text) : text;
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** A seeded PRNG (mulberry32) returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` distinct random cut offsets in (0, length). */
export function randomCuts(length: number, count: number, random: () => number): number[] {
  const cuts = new Set<number>();
  const want = Math.min(count, Math.max(0, length - 1));
  while (cuts.size < want) cuts.add(1 + Math.floor(random() * (length - 1)));
  return [...cuts].sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------------------------
// Server

function isReply(value: unknown): value is Reply {
  const type = (value as { type?: unknown } | null)?.type;
  return type === 'body' || type === 'chunks' || type === 'destroy' || type === 'hang';
}

function isRoute(value: unknown): value is Route {
  return typeof value === 'function' || Array.isArray(value) || isReply(value);
}

/** Starts a server answering from a route table (`'GET /path'` or `'/path'` keys) or one route for all. */
export async function startServer(routes: Record<string, Route> | Route): Promise<TestServer> {
  const table: [string, Route][] = isRoute(routes) ? [['*', routes]] : Object.entries(routes);
  const calls = new Map<string, number>();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const wait = (ms: number | undefined): Promise<void> => {
    if (!ms || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  };

  const find = (method: string, path: string): [string, Route] | undefined =>
    table.find(([key]) => key === '*' || key === path || key === `${method} ${path}`);

  const send = async (res: ServerResponse, reply: Reply): Promise<void> => {
    if (reply.type === 'hang') return;
    await wait(reply.waitMs);
    if (closed) return;
    if (reply.type === 'destroy') {
      res.socket?.destroy();
      return;
    }
    const code = reply.status ?? 200;
    if (reply.statusText !== undefined) res.statusMessage = reply.statusText;
    res.statusCode = code;
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.type === 'body') {
      res.end(reply.body);
      return;
    }
    res.flushHeaders();
    const { chunks, chunkDelayMs, destroyAfter } = reply;
    for (let i = 0; i < chunks.length; i++) {
      if (destroyAfter !== undefined && i >= destroyAfter) break;
      if (i > 0) {
        const delay = typeof chunkDelayMs === 'number' ? chunkDelayMs : chunkDelayMs?.[i - 1];
        await wait(delay);
      }
      if (closed || res.destroyed) return;
      const chunk = chunks[i]!;
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    if (destroyAfter !== undefined) {
      // Let the written chunks leave before the reset so the client sees them first.
      await wait(10);
      res.socket?.destroy();
      return;
    }
    res.end();
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const at = performance.now();
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const url = req.url ?? '/';
      const path = url.split('?')[0] ?? '/';
      const method = req.method ?? 'GET';
      const record: RecordedRequest = {
        method,
        path,
        url,
        headers: req.headers,
        body: Buffer.concat(parts).toString('utf8'),
        at,
      };
      requests.push(record);
      const found = find(method, path);
      const handle = async (): Promise<void> => {
        if (!found) {
          await send(res, json({ error: `no route for ${method} ${path}` }, { status: 404 }));
          return;
        }
        const [key, route] = found;
        const call = calls.get(key) ?? 0;
        calls.set(key, call + 1);
        let reply: Reply | undefined;
        if (typeof route === 'function') reply = await route(record, { res, call });
        else if (Array.isArray(route)) reply = route[Math.min(call, route.length - 1)];
        else reply = route as Reply;
        if (reply) await send(res, reply);
      };
      handle().catch((error: unknown) => {
        if (!res.headersSent) {
          res.statusCode = 500;
          res.end(String(error));
        } else res.destroy();
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    hits: (key: string) => requests.filter((r) => key === r.path || key === `${r.method} ${r.path}`),
    close: async () => {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await done;
    },
  };
}

/** A port on 127.0.0.1 with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
