import { afterEach, describe, expect, it } from 'vitest';
import { isRyeError } from '../src/errors.js';
import { httpRequest } from '../src/http/index.js';
import { backoffDelay, parseRetryAfter, retryDelay } from '../src/http/retry.js';
import {
  closedPort,
  destroy,
  hang,
  json,
  sse,
  startServer,
  status,
  type TestServer,
  text,
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

/** Gaps in ms between consecutive requests the server saw. */
function gaps(s: TestServer): number[] {
  return s.requests.slice(1).map((r, i) => r.at - s.requests[i]!.at);
}

/**
 * The delay a test expects the client not to wait (a backoff it should skip, a hang it should
 * time out of) is long, and the bound on what it did wait is far below it and far above what it
 * takes: a loaded machine cannot push the one past the bound, nor the other under it.
 */
const LONG_DELAY_MS = 120_000;
const WELL_BEFORE_THE_DELAY = 15_000;

describe('httpRequest: bodies and headers', () => {
  it('GETs JSON with lower-case response headers', async () => {
    const s = await serve({
      'GET /data': json({ hello: 'wörld', n: [1, 2] }, { headers: { 'X-Trace': 'abc' } }),
    });
    const r = await httpRequest({ url: `${s.url}/data` });
    expect(r).toMatchObject({
      success: true,
      status: 200,
      attempts: 1,
      json: { hello: 'wörld', n: [1, 2] },
      body: '{"hello":"wörld","n":[1,2]}',
    });
    expect(r.error).toBeUndefined();
    expect(r.headers['x-trace']).toBe('abc');
    expect(r.headers['content-type']).toBe('application/json');
    expect(Object.keys(r.headers).every((k) => k === k.toLowerCase())).toBe(true);
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('GETs text without a json field', async () => {
    const s = await serve({ '/t': text('plain words') });
    const r = await httpRequest({ url: `${s.url}/t` });
    expect(r.body).toBe('plain words');
    expect('json' in r).toBe(false);
    expect(r.success).toBe(true);
  });

  it('sends request headers', async () => {
    const s = await serve({ '/h': json({}) });
    await httpRequest({ url: `${s.url}/h`, headers: { Authorization: 'Bearer k', 'x-custom': 'v' } });
    expect(s.requests[0]!.headers.authorization).toBe('Bearer k');
    expect(s.requests[0]!.headers['x-custom']).toBe('v');
  });

  it('POSTs an object as JSON', async () => {
    const s = await serve({ 'POST /echo': (req) => json({ got: JSON.parse(req.body) }, { status: 201 }) });
    const r = await httpRequest({ url: `${s.url}/echo`, method: 'POST', body: { a: 1, b: ['x'] } });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ got: { a: 1, b: ['x'] } });
    expect(s.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('sends a string as text/plain unless a content-type is given', async () => {
    const s = await serve({ '/echo': json({}) });
    await httpRequest({ url: `${s.url}/echo`, method: 'PUT', body: 'héllo' });
    await httpRequest({
      url: `${s.url}/echo`,
      method: 'PATCH',
      body: '<x/>',
      headers: { 'Content-Type': 'application/xml' },
    });
    const [a, b] = s.requests;
    expect(a!.method).toBe('PUT');
    expect(a!.body).toBe('héllo');
    expect(a!.headers['content-type']).toMatch(/^text\/plain/);
    expect(b!.method).toBe('PATCH');
    expect(b!.body).toBe('<x/>');
    expect(b!.headers['content-type']).toBe('application/xml');
  });

  it('sends a Uint8Array as-is and JSON scalars as JSON', async () => {
    const s = await serve({ '/echo': json({}) });
    await httpRequest({ url: `${s.url}/echo`, method: 'POST', body: new TextEncoder().encode('raw✓') });
    await httpRequest({ url: `${s.url}/echo`, method: 'POST', body: 42 });
    expect(s.requests[0]!.body).toBe('raw✓');
    expect(s.requests[1]!.body).toBe('42');
    expect(s.requests[1]!.headers['content-type']).toBe('application/json');
  });

  it('does not send a body with GET or HEAD', async () => {
    const s = await serve({ '/x': text('hi') });
    const g = await httpRequest({ url: `${s.url}/x`, body: { ignored: true } });
    const h = await httpRequest({ url: `${s.url}/x`, method: 'HEAD', body: 'ignored' });
    expect(g.success).toBe(true);
    expect(h).toMatchObject({ success: true, status: 200, body: '' });
    expect(s.requests.map((r) => [r.method, r.body])).toEqual([
      ['GET', ''],
      ['HEAD', ''],
    ]);
  });

  it('DELETEs', async () => {
    const s = await serve({ 'DELETE /item': status(204) });
    const r = await httpRequest({ url: `${s.url}/item`, method: 'DELETE' });
    expect(r).toMatchObject({ success: true, status: 204, body: '' });
  });
});

describe('httpRequest: HTTP errors and retries', () => {
  it('does not retry a 404 and reports it', async () => {
    const s = await serve({ '/missing': json({ error: 'nope' }, { status: 404 }) });
    const r = await httpRequest({ url: `${s.url}/missing`, retries: 3, baseDelayMs: 10 });
    expect(r).toMatchObject({
      success: false,
      status: 404,
      attempts: 1,
      error: 'HTTP 404: Not Found',
      json: { error: 'nope' },
    });
    expect(s.requests).toHaveLength(1);
  });

  it('does not retry other 4xx', async () => {
    const s = await serve({ '/bad': status(400, { body: 'bad input' }) });
    const r = await httpRequest({ url: `${s.url}/bad`, retries: 2, baseDelayMs: 10 });
    expect(r).toMatchObject({ status: 400, attempts: 1, body: 'bad input', error: 'HTTP 400: Bad Request' });
  });

  it('retries 503 with exponential backoff until 200', async () => {
    const s = await serve({ '/flaky': [status(503), status(503), status(503), json({ ok: true })] });
    const r = await httpRequest({ url: `${s.url}/flaky`, retries: 3, baseDelayMs: 40 });
    expect(r).toMatchObject({ success: true, status: 200, attempts: 4, json: { ok: true } });
    expect(r.error).toBeUndefined();
    const [g0, g1, g2] = gaps(s) as [number, number, number];
    // 40, 80, 160 ms between attempts.
    expect(g0).toBeGreaterThanOrEqual(38);
    expect(g1).toBeGreaterThanOrEqual(78);
    expect(g2).toBeGreaterThanOrEqual(158);
    expect(g2).toBeGreaterThan(g0 + 60);
  });

  it('retries with linear backoff at a constant delay', async () => {
    const s = await serve({ '/flaky': [status(500), status(502), status(504), json({ ok: true })] });
    const r = await httpRequest({ url: `${s.url}/flaky`, retries: 5, baseDelayMs: 40, backoff: 'linear' });
    expect(r).toMatchObject({ success: true, attempts: 4 });
    const all = gaps(s);
    for (const g of all) expect(g).toBeGreaterThanOrEqual(38);
    // Exponential would wait 160 ms before the third retry.
    expect(all[2]).toBeLessThan(120);
  });

  it('caps the backoff at maxRetryDelayMs', async () => {
    const s = await serve({ '/down': status(503) });
    const r = await httpRequest({
      url: `${s.url}/down`,
      retries: 2,
      baseDelayMs: LONG_DELAY_MS,
      maxRetryDelayMs: 20,
    });
    expect(r.attempts).toBe(3);
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('returns the last 5xx response when retries run out', async () => {
    const s = await serve({ '/down': status(503, { body: '{"error":"overloaded"}' }) });
    const r = await httpRequest({ url: `${s.url}/down`, retries: 2, baseDelayMs: 5 });
    expect(r).toMatchObject({
      success: false,
      status: 503,
      attempts: 3,
      error: 'HTTP 503: Service Unavailable',
      json: { error: 'overloaded' },
    });
    expect(s.requests).toHaveLength(3);
  });

  it('honours retry-after: 0 on 429 instead of the backoff', async () => {
    const s = await serve({ '/rl': [status(429, { headers: { 'retry-after': '0' } }), json({ ok: 1 })] });
    const r = await httpRequest({ url: `${s.url}/rl`, retries: 1, baseDelayMs: LONG_DELAY_MS });
    expect(r).toMatchObject({ success: true, attempts: 2 });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('honours retry-after: 1 (seconds) on 429', async () => {
    const s = await serve({ '/rl': [status(429, { headers: { 'retry-after': '1' } }), json({ ok: 1 })] });
    const r = await httpRequest({ url: `${s.url}/rl`, retries: 1, baseDelayMs: 5 });
    expect(r).toMatchObject({ success: true, attempts: 2 });
    const [g] = gaps(s) as [number];
    expect(g).toBeGreaterThanOrEqual(990);
    expect(g).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('honours retry-after as an HTTP-date', async () => {
    const past = new Date(Date.now() - 60_000).toUTCString();
    const s = await serve({ '/rl': [status(429, { headers: { 'retry-after': past } }), json({ ok: 1 })] });
    // A date in the past means "now": the long backoff is not used.
    const r = await httpRequest({ url: `${s.url}/rl`, retries: 1, baseDelayMs: LONG_DELAY_MS });
    expect(r).toMatchObject({ success: true, attempts: 2 });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('caps retry-after at maxRetryDelayMs', async () => {
    const s = await serve({ '/rl': [status(429, { headers: { 'retry-after': '3600' } }), json({ ok: 1 })] });
    const r = await httpRequest({ url: `${s.url}/rl`, retries: 1, maxRetryDelayMs: 30 });
    expect(r).toMatchObject({ success: true, attempts: 2 });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('reports an exhausted 429', async () => {
    const s = await serve({ '/rl': status(429, { headers: { 'retry-after': '0' } }) });
    const r = await httpRequest({ url: `${s.url}/rl`, retries: 1 });
    expect(r).toMatchObject({
      success: false,
      status: 429,
      attempts: 2,
      error: 'HTTP 429: Too Many Requests',
    });
  });
});

describe('httpRequest: network errors and timeouts', () => {
  it('retries a refused connection, then reports status 0', async () => {
    const port = await closedPort();
    const r = await httpRequest({ url: `http://127.0.0.1:${port}/`, retries: 2, baseDelayMs: 10 });
    expect(r).toMatchObject({ success: false, status: 0, attempts: 3, headers: {}, body: '' });
    expect(r.error).toMatch(/^Request failed after 3 attempts: .*ECONNREFUSED/);
    expect('json' in r).toBe(false);
  });

  it('says "1 attempt" without retries', async () => {
    const port = await closedPort();
    const r = await httpRequest({ url: `http://127.0.0.1:${port}/` });
    expect(r.attempts).toBe(1);
    expect(r.error).toMatch(/^Request failed after 1 attempt: .*ECONNREFUSED/);
  });

  it('retries a connection reset by the server', async () => {
    const s = await serve({ '/reset': [destroy(), json({ ok: true })] });
    const r = await httpRequest({ url: `${s.url}/reset`, retries: 1, baseDelayMs: 5 });
    expect(r).toMatchObject({ success: true, attempts: 2, json: { ok: true } });
  });

  it('times out each attempt and retries', async () => {
    const s = await serve({ '/slow': hang() });
    const started = performance.now();
    const r = await httpRequest({ url: `${s.url}/slow`, timeoutMs: 100, retries: 1, baseDelayMs: 10 });
    const elapsed = performance.now() - started;
    expect(r).toMatchObject({ success: false, status: 0, attempts: 2 });
    expect(r.error).toBe('Request failed after 2 attempts: Timed out after 100 ms');
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(elapsed).toBeLessThan(WELL_BEFORE_THE_DELAY);
    expect(s.requests).toHaveLength(2);
  });

  it('a slow first attempt times out and the retry succeeds', async () => {
    const s = await serve({ '/slow': [json({ late: true }, { waitMs: 2000 }), json({ ok: true })] });
    const r = await httpRequest({ url: `${s.url}/slow`, timeoutMs: 150, retries: 1, baseDelayMs: 5 });
    expect(r).toMatchObject({ success: true, attempts: 2, json: { ok: true } });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('the timeout also covers reading the body', async () => {
    const s = await serve({ '/drip': sse(['a', 'b'], { chunkDelayMs: 3000 }) });
    const r = await httpRequest({ url: `${s.url}/drip`, timeoutMs: 150 });
    expect(r).toMatchObject({
      status: 0,
      attempts: 1,
      error: 'Request failed after 1 attempt: Timed out after 150 ms',
    });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it("stops at once when the caller's signal aborts, without retrying", async () => {
    const s = await serve({ '/slow': hang() });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = await httpRequest({ url: `${s.url}/slow`, retries: 5, signal: controller.signal });
    expect(r).toMatchObject({ success: false, status: 0, attempts: 1, error: 'Aborted by caller' });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('an abort during the retry delay ends the wait', async () => {
    const s = await serve({ '/down': status(503) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user cancelled')), 100);
    const r = await httpRequest({
      url: `${s.url}/down`,
      retries: 3,
      baseDelayMs: LONG_DELAY_MS,
      signal: controller.signal,
    });
    expect(r).toMatchObject({
      success: false,
      status: 0,
      attempts: 1,
      error: 'Aborted by caller: user cancelled',
    });
    expect(r.duration_ms).toBeLessThan(WELL_BEFORE_THE_DELAY);
  });

  it('an already-aborted signal sends nothing', async () => {
    const s = await serve({ '/x': json({}) });
    const r = await httpRequest({ url: `${s.url}/x`, signal: AbortSignal.abort() });
    expect(r).toMatchObject({ success: false, status: 0, attempts: 0, error: 'Aborted by caller' });
    expect(s.requests).toHaveLength(0);
  });
});

describe('httpRequest: validation', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['missing url', {}, /url is required/],
    ['relative url', { url: '/just/a/path' }, /not a valid absolute URL/],
    ['non-http url', { url: 'ftp://example.com/x' }, /must use http: or https:/],
    ['unknown method', { url: 'http://127.0.0.1/', method: 'FETCH' }, /unknown method FETCH/],
    ['negative retries', { url: 'http://127.0.0.1/', retries: -1 }, /retries must be an integer >= 0/],
    ['fractional retries', { url: 'http://127.0.0.1/', retries: 1.5 }, /retries must be an integer/],
    ['zero timeout', { url: 'http://127.0.0.1/', timeoutMs: 0 }, /timeoutMs must be a finite number >= 1/],
    ['bad backoff', { url: 'http://127.0.0.1/', backoff: 'random' }, /unknown backoff random/],
    ['bad header', { url: 'http://127.0.0.1/', headers: { 'bad header': 'x' } }, /invalid headers/],
    ['cyclic body', { url: 'http://127.0.0.1/', method: 'POST', body: cyclic() }, /could not be serialised/],
  ];
  for (const [name, options, message] of cases) {
    it(`rejects ${name} with VALIDATION`, async () => {
      const error: unknown = await httpRequest(options as never).catch((e: unknown) => e);
      expect(isRyeError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'VALIDATION' });
      expect((error as Error).message).toMatch(message);
      expect((error as { hint?: string }).hint).toBeTruthy();
    });
  }

  it('accepts a lower-case method from untyped callers', async () => {
    const s = await serve({ 'POST /x': json({ ok: true }) });
    const r = await httpRequest({ url: `${s.url}/x`, method: 'post' as never, body: {} });
    expect(r.success).toBe(true);
  });
});

describe('retry policy', () => {
  const policy = { backoff: 'exponential' as const, baseDelayMs: 100, maxRetryDelayMs: 1000 };

  it('computes exponential and linear delays with a cap', () => {
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, policy))).toEqual([100, 200, 400, 800, 1000]);
    expect([0, 1, 5].map((n) => backoffDelay(n, { ...policy, backoff: 'linear' }))).toEqual([100, 100, 100]);
  });

  it('parses retry-after seconds and HTTP-dates', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 2 ', now)).toBe(2000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
  });

  it('prefers retry-after over backoff, capped', () => {
    expect(retryDelay(3, '0', policy)).toBe(0);
    expect(retryDelay(0, '3600', policy)).toBe(1000);
    expect(retryDelay(1, 'garbage', policy)).toBe(200);
    expect(retryDelay(1, null, policy)).toBe(200);
  });
});

function cyclic(): unknown {
  const a: Record<string, unknown> = {};
  a.self = a;
  return a;
}
