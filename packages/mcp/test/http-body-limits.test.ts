/**
 * Request bodies on the HTTP transport: a token holder who opens many POSTs and never finishes
 * their bodies must not pin the server's memory (bytes in flight are bounded, beyond is 503) nor
 * hold a connection for Node's default 300 s (an unfinished body is cut with 408).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRyeServer, type HttpServerHandle, serveHttp } from '../src/index.js';
import { createFakeOperations } from './fake-operations.js';

const fake = createFakeOperations();
const handles: HttpServerHandle[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const handle of handles.splice(0)) await handle.close();
});

async function serve(options: {
  maxBodyBytesInFlight?: number;
  bodyTimeoutMs?: number;
}): Promise<HttpServerHandle> {
  const http = await serveHttp(() => createRyeServer(fake.operations, { version: '1.0.0' }), options);
  handles.push(http);
  return http;
}

/** A POST announcing `length` bytes of body that sends only `sent` of them; `response` is all it got back. */
async function unfinishedPost(
  port: number,
  length: number,
  sent: number,
): Promise<{ response: Promise<string>; socket: Socket }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  const response = new Promise<string>((resolve) => {
    socket.on('data', (data) => {
      received += data.toString('utf8');
    });
    socket.on('close', () => resolve(received));
    socket.on('error', () => {});
  });
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${length}\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.write(Buffer.alloc(sent, 0x20), () => resolve()));
  return { response, socket };
}

async function initializeStatus(url: string): Promise<number> {
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
  await res.text();
  return res.status;
}

describe('request bodies on the HTTP transport', () => {
  it('refuses a body past the bytes in flight with 503 and Retry-After, and frees them when a body goes', async () => {
    const http = await serve({ maxBodyBytesInFlight: 96 * 1024 });
    const first = await unfinishedPost(http.port, 200_000, 64 * 1024);
    // Wait until the server holds the first body's bytes before the second arrives.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await unfinishedPost(http.port, 200_000, 64 * 1024);
    const refused = await second.response;
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused).toMatch(/retry-after: 1/i);
    expect(refused).toMatch(/too many request bodies in flight/);
    first.socket.destroy();
    await first.response;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await initializeStatus(http.url)).toBe(200);
  });

  it('cuts a body that is not sent in time with 408, long before Node’s 300 s', async () => {
    const http = await serve({ bodyTimeoutMs: 300 });
    const post = await unfinishedPost(http.port, 1000, 10);
    const outcome = await Promise.race([
      post.response,
      new Promise<string>((resolve) => setTimeout(() => resolve('still open after 10 s'), 10_000)),
    ]);
    expect(outcome).toMatch(/^HTTP\/1\.1 408 /);
    expect(await initializeStatus(http.url)).toBe(200);
  });
});
