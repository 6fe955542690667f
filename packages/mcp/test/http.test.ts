import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRyeServer, type HttpServerHandle, serveHttp } from '../src/index.js';
import { createFakeOperations } from './fake-operations.js';

const fake = createFakeOperations();
let http: HttpServerHandle;
let serversCreated = 0;

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(http.url));
  const client = new Client({ name: 'http-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const postHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('serveHttp (Streamable HTTP)', () => {
  beforeAll(async () => {
    http = await serveHttp(
      () => {
        serversCreated++;
        return createRyeServer(fake.operations, { version: '1.0.0' });
      },
      { port: 0 },
    );
  });

  afterAll(async () => {
    await http.close();
  });

  it('listens on 127.0.0.1 at /mcp', () => {
    expect(http.port).toBeGreaterThan(0);
    expect(http.url).toBe(`http://127.0.0.1:${http.port}/mcp`);
  });

  it('lists the tools and calls one', async () => {
    const { client } = await connect();
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['search', 'load', 'execute', 'sign']);
      const result = await client.callTool({ name: 'search', arguments: { scope: 'tool', query: 'bash' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ total: 1 });
    } finally {
      await client.close();
    }
  });

  it('gives each client its own session and Server, and forgets a session once deleted', async () => {
    const before = serversCreated;
    const a = await connect();
    const b = await connect();
    try {
      expect(serversCreated).toBe(before + 2);
      expect(a.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(b.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
      await a.client.ping();
      await b.client.ping();

      const stale = a.transport.sessionId!;
      await a.transport.terminateSession();
      const res = await fetch(http.url, {
        method: 'POST',
        headers: { ...postHeaders, 'mcp-session-id': stale, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
      expect(res.status).toBe(404);
      await b.client.ping();
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('rejects a non-initialize request without a session id with 400', async () => {
    const res = await fetch(http.url, {
      method: 'POST',
      headers: postHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });

  it('answers invalid JSON with a parse error, other paths with 404', async () => {
    const bad = await fetch(http.url, { method: 'POST', headers: postHeaders, body: '{nope' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
    const other = await fetch(http.url.replace('/mcp', '/other'), { method: 'POST', headers: postHeaders });
    expect(other.status).toBe(404);
  });

  it('refuses requests from a foreign Origin (DNS rebinding guard)', async () => {
    const res = await fetch(http.url, {
      method: 'POST',
      headers: { ...postHeaders, origin: 'https://evil.example' },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(403);
  });

  it('accepts a raw initialize and returns a session id header', async () => {
    const res = await fetch(http.url, {
      method: 'POST',
      headers: postHeaders,
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(200);
    const sessionId = res.headers.get('mcp-session-id');
    expect(sessionId).toBeTruthy();
    await res.text();
    const del = await fetch(http.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(del.status).toBe(200);
  });

  it('closes with open sessions and frees the port', async () => {
    const other = await serveHttp(() => createRyeServer(fake.operations, { version: '1' }));
    const { client } = await connect();
    const transport = new StreamableHTTPClientTransport(new URL(other.url));
    const otherClient = new Client({ name: 'x', version: '0' });
    await otherClient.connect(transport);
    await other.close();
    await expect(fetch(other.url)).rejects.toThrow();
    await otherClient.close();
    await client.close();
  });
});
