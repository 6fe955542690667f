/**
 * The provider transport (node:http/https): credentials never ride in a URL, and messages show a
 * URL without its query or userinfo (either may hold a secret).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CallFailure, HttpCall } from '../src/provider/transport.js';

async function failure(url: string): Promise<CallFailure> {
  const call = new HttpCall('test', url, 2000, undefined);
  try {
    await call.post({ 'content-type': 'application/json' }, '{}');
  } catch (error) {
    return error as CallFailure;
  } finally {
    call.close();
  }
  throw new Error('the call did not fail');
}

describe('provider transport', () => {
  it('refuses a URL that carries credentials, and never shows them', async () => {
    const error = await failure('http://user:s3cret@127.0.0.1:9/v1/messages');
    expect(error).toBeInstanceOf(CallFailure);
    expect(error.message).toMatch(/holds credentials/);
    expect(error.message).not.toContain('s3cret');
  });

  it('shows a URL without its query when it cannot connect', async () => {
    const error = await failure('http://127.0.0.1:9/v1/messages?key=s3cret');
    expect(error.message).toContain('http://127.0.0.1:9/v1/messages');
    expect(error.message).not.toContain('s3cret');
    expect(error.info).toMatchObject({ httpStatus: 0, errorClass: 'ConnectionError' });
  });

  it('says when the request is on its way, before any answer', async () => {
    // The server answers only once the client has said its request went out.
    let sent = false;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const started = Date.now();
        const answer = () => {
          if (!sent && Date.now() - started < 5000) return void setTimeout(answer, 5);
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sent }));
        };
        answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const call = new HttpCall(
      'test',
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      10_000,
      undefined,
    );
    try {
      const res = await call.post({ 'content-type': 'application/json' }, '{}', () => {
        sent = true;
      });
      expect(JSON.parse(await call.text(res))).toEqual({ sent: true });
    } finally {
      call.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
