/**
 * The session cap of the HTTP transport: a new session may replace only an idle one, so a token
 * holder who opens many sessions cannot log the other clients out; while every session is in
 * use, a new one is refused with 503.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRyeServer, type HttpServerHandle, serveHttp } from '../src/index.js';
import { createFakeOperations } from './fake-operations.js';

const fake = createFakeOperations();
const handles: HttpServerHandle[] = [];
afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.close();
});

async function serve(options: { maxSessions: number; sessionInUseMs?: number }): Promise<HttpServerHandle> {
  const http = await serveHttp(() => createRyeServer(fake.operations, { version: '1.0.0' }), options);
  handles.push(http);
  return http;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'cap-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** A raw initialize, its body read to the end (so the request is no longer open). */
async function initialize(
  url: string,
): Promise<{ status: number; body: string; retryAfter: string | null; sessionId: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  });
  return {
    status: res.status,
    body: await res.text(),
    retryAfter: res.headers.get('retry-after'),
    sessionId: res.headers.get('mcp-session-id') ?? '',
  };
}

async function ping(url: string, sessionId: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
  });
  await res.text();
  return res.status;
}

describe('the HTTP session cap', () => {
  it('never closes a session in use: a flood of new sessions is refused with 503, the client keeps working', async () => {
    const http = await serve({ maxSessions: 3 });
    const victim = await connect(http.url);
    try {
      const flood = [];
      for (let i = 0; i < 6; i++) flood.push(await initialize(http.url));
      expect(flood.map((r) => r.status)).toEqual([200, 200, 503, 503, 503, 503]);
      expect(flood[2]?.body).toMatch(/all 3 sessions are in use/);
      expect(Number(flood[2]?.retryAfter)).toBeGreaterThan(0);
      expect(http.sessionCount()).toBe(3);
      // The first client was never logged out.
      await expect(victim.ping()).resolves.toBeDefined();
    } finally {
      await victim.close();
    }
  });

  it('replaces the least recently used idle session at the cap', async () => {
    const http = await serve({ maxSessions: 2, sessionInUseMs: 0 });
    const older = await initialize(http.url);
    const newer = await initialize(http.url);
    expect([older.status, newer.status]).toEqual([200, 200]);
    // `newer` was used last, so `older` is the one an idle replacement closes.
    expect(await ping(http.url, newer.sessionId)).toBe(200);
    expect(await ping(http.url, older.sessionId)).toBe(200);
    expect(await ping(http.url, newer.sessionId)).toBe(200);
    expect((await initialize(http.url)).status).toBe(200);
    expect(http.sessionCount()).toBe(2);
    expect(await ping(http.url, newer.sessionId)).toBe(200);
    expect(await ping(http.url, older.sessionId)).toBe(404);
  });

  it('a client with its stream open that asked recently is in use', async () => {
    const http = await serve({ maxSessions: 1, sessionInUseMs: 60_000 });
    const client = await connect(http.url);
    try {
      // The SDK client keeps a GET stream open for server notifications.
      expect((await initialize(http.url)).status).toBe(503);
      await expect(client.ping()).resolves.toBeDefined();
    } finally {
      await client.close();
    }
  });

  it('a session whose only open stream carried nothing for the in-use time can be replaced', async () => {
    // A token holder parking one silent GET stream per session held the cap for ever.
    const http = await serve({ maxSessions: 1, sessionInUseMs: 300 });
    const parked = await initialize(http.url);
    const stream = await openStream(http.url, parked.sessionId);
    try {
      expect((await initialize(http.url)).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const next = await initialize(http.url);
      expect(next.status).toBe(200);
      expect(http.sessionCount()).toBe(1);
      // The parked session is gone and its stream was ended.
      expect(await ping(http.url, parked.sessionId)).toBe(404);
      await expect(stream.ended).resolves.toBe(true);
    } finally {
      stream.abort();
    }
  });
});

/** Opens the session's GET stream and reads it in the background; `ended` settles when it ends. */
async function openStream(
  url: string,
  sessionId: string,
): Promise<{ ended: Promise<boolean>; abort(): void }> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: 'GET',
    signal: controller.signal,
    headers: {
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
  });
  expect(res.status).toBe(200);
  const ended = (async () => {
    try {
      for await (const _ of res.body!) {
        // drained: a notification would only mark the session seen
      }
    } catch {
      // aborted
    }
    return true;
  })();
  return { ended, abort: () => controller.abort() };
}
