/**
 * `rye threads view`'s server as an attacker meets it (issue 33, point 1): only the printed URL's
 * token opens anything, only the loopback names are answered (DNS rebinding), cancel and kill
 * are refused without --control and from any other origin, and every answer carries a strict CSP.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';
import { startView } from './viewer-helpers.js';

const fixture = useLookFixture();

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One raw request on 127.0.0.1 (raw, so the Host and Origin headers are ours to set). */
function call(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} },
      (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

async function lookThread(): Promise<string> {
  const fx = fixture();
  await fx.serve(LOOK_SCRIPT);
  const reply = await fx.rye.execute({ item_id: 'directive:acme/look', thread: 'fork' });
  expect(reply.status, JSON.stringify(reply)).toBe('success');
  return String(reply.thread_id);
}

describe('rye threads view, read-only', () => {
  it('answers only requests with the token and a loopback Host, under a strict CSP; reads threads; refuses cancel', async () => {
    const fx = fixture();
    const id = await lookThread();
    const view = await startView(fx.project, fx.env);
    try {
      const base = new URL(view.url).pathname;
      const page = await call(view.port, base);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(page.headers['x-frame-options']).toBe('DENY');

      for (const path of [
        '/',
        '/api/threads',
        '/t/not-the-token/api/threads',
        `${base.slice(0, -2)}/api/threads`,
      ]) {
        const refused = await call(view.port, path);
        expect(refused.status, path).toBe(403);
        expect(refused.body).not.toContain(id);
      }
      // A DNS-rebound page sends its own name as the Host: no answer, token or not.
      const rebound = await call(view.port, `${base}api/threads`, {
        headers: { Host: `evil.example:${view.port}` },
      });
      expect(rebound.status).toBe(421);
      expect(rebound.body).not.toContain(id);

      const tree = JSON.parse((await call(view.port, `${base}api/threads`)).body);
      expect(tree.threads.map((t: { thread_id: string }) => t.thread_id)).toContain(id);
      const slice = JSON.parse(
        (await call(view.port, `${base}api/transcript?id=${encodeURIComponent(id)}&offset=0`)).body,
      );
      expect(slice.events.map((e: { event_type: string }) => e.event_type)).toContain('thread_completed');
      const detail = JSON.parse(
        (await call(view.port, `${base}api/thread?id=${encodeURIComponent(id)}`)).body,
      );
      expect(detail).toMatchObject({ integrity: { valid: true }, thread: { thread_id: id } });
      expect(detail.capabilities.length).toBeGreaterThan(0);

      // An id the registry does not know is never turned into a path.
      const outside = await call(
        view.port,
        `${base}api/transcript?id=${encodeURIComponent('../../../etc')}&offset=0`,
      );
      expect(outside.status).toBe(404);
      expect(JSON.parse(outside.body)).toMatchObject({ error_type: 'NOT_FOUND' });

      const origin = `http://127.0.0.1:${view.port}`;
      const cancel = await call(view.port, `${base}api/cancel`, {
        method: 'POST',
        headers: { Origin: origin, 'Content-Type': 'application/json' },
        body: JSON.stringify({ thread_id: id }),
      });
      expect(cancel.status).toBe(403);
      expect(JSON.parse(cancel.body).error).toMatch(/read-only/);
      // A GET never changes anything.
      expect((await call(view.port, `${base}api/cancel?id=${encodeURIComponent(id)}`)).status).toBe(404);
    } finally {
      await view.stop();
    }
  }, 60_000);

  it('with --control, takes cancel only as a JSON POST from its own origin', async () => {
    const fx = fixture();
    const id = await lookThread();
    const view = await startView(fx.project, fx.env, ['--control']);
    try {
      const path = `${new URL(view.url).pathname}api/cancel`;
      const body = JSON.stringify({ thread_id: id });
      const json = { 'Content-Type': 'application/json' };
      expect((await call(view.port, path, { method: 'POST', headers: json, body })).status).toBe(403);
      const foreign = await call(view.port, path, {
        method: 'POST',
        headers: { ...json, Origin: 'http://evil.example' },
        body,
      });
      expect(foreign.status).toBe(403);
      const form = await call(view.port, path, {
        method: 'POST',
        headers: {
          Origin: `http://127.0.0.1:${view.port}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: `thread_id=${encodeURIComponent(id)}`,
      });
      expect(form.status).toBe(415);
      const own = await call(view.port, path, {
        method: 'POST',
        headers: { ...json, Origin: `http://127.0.0.1:${view.port}` },
        body,
      });
      // The thread has ended: the same answer `rye threads cancel` gives, not a refusal of the request.
      expect(own.status, own.body).not.toBe(403);
      expect(JSON.parse(own.body).thread_id).toBe(id);
    } finally {
      await view.stop();
    }
  }, 60_000);
});
