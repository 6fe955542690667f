/**
 * One loopback rule (DECISIONS 31, issue 10 item 9): the same predicate decides where a server
 * may bind without --allow-remote and whether the Host/Origin (DNS rebinding) check is on.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createRyeServer, isDefaultBindHost, isLoopbackHost, serveHttp } from '../src/index.js';
import { createFakeOperations } from './fake-operations.js';

describe('the loopback predicate', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.0.0.2', true],
    ['127.255.255.255', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['[::FFFF:127.0.0.9]', true],
    ['[::ffff:7f00:1]', true],
    ['::ffff:7fff:ffff', true],
    ['::ffff:a00:1', false],
    ['127.0.0.256', false],
    ['127.0.0', false],
    ['128.0.0.1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['::ffff:10.0.0.1', false],
    ['localhost.evil.example', false],
    ['127.0.0.1.evil.example', false],
    ['evil.example', false],
    ['', false],
  ])('%s is loopback: %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  it('binds without --allow-remote only on the usual loopback names', () => {
    for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost']) expect(isDefaultBindHost(host)).toBe(true);
    for (const host of ['127.0.0.2', '0.0.0.0', '10.0.0.1', '::'])
      expect(isDefaultBindHost(host)).toBe(false);
  });
});

/** POSTs an initialize with the given Host header (fetch cannot set Host). */
function postWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the Host check is on for every loopback bind', () => {
  const binds: Array<{ host: string; allowRemote?: boolean }> = [
    { host: '127.0.0.1' },
    { host: 'localhost' },
    { host: '127.0.0.2', allowRemote: true },
  ];
  for (const bind of binds) {
    it(`bound to ${bind.host}: a foreign Host is refused, a loopback Host served`, async () => {
      const fake = createFakeOperations();
      const http = await serveHttp(() => createRyeServer(fake.operations, { version: '1' }), {
        port: 0,
        ...bind,
      });
      try {
        expect(await postWithHost(http.url, `evil.example:${http.port}`)).toBe(403);
        expect(await postWithHost(http.url, `localhost:${http.port}`)).toBe(200);
      } finally {
        await http.close();
      }
    });
  }

  it('a 127.x alias without allowRemote is refused by serveHttp itself', async () => {
    const fake = createFakeOperations();
    await expect(
      serveHttp(() => createRyeServer(fake.operations, { version: '1' }), { port: 0, host: '127.0.0.2' }),
    ).rejects.toThrow(/127\.0\.0\.2/);
  });
});
