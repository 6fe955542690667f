/**
 * Thread records a cloned repository planted (attack round on issue 33, finding 2): the viewer,
 * `tail` and `show` read thread.json and transcript.jsonl only as regular files reached without
 * a link, within size bounds; a link to /dev/zero cannot hang or bloat them, a link to a file
 * outside the project is never served or printed.
 */
import { rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { threadDir, threadsStateRoot } from '@ryeos/threads';
import { describe, expect, it } from 'vitest';
import { rye as ryeCli } from './helpers.js';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';
import { startView } from './viewer-helpers.js';

const fixture = useLookFixture();

/** A GET on 127.0.0.1 that fails the test if no answer comes within 15 s (the old hang). */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 15_000 }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path}`)));
    req.on('error', reject);
    req.end();
  });
}

async function lookThread(): Promise<{ id: string; dir: string }> {
  const fx = fixture();
  await fx.serve(LOOK_SCRIPT);
  const reply = await fx.rye.execute({ item_id: 'directive:acme/look', thread: 'fork' });
  expect(reply.status, JSON.stringify(reply)).toBe('success');
  const id = String(reply.thread_id);
  return { id, dir: threadDir(threadsStateRoot(fx.project), id) };
}

/** A file outside the project that a planted link points at. */
function outsideSecret(): string {
  const path = join(fixture().root, 'secret.jsonl');
  const line = {
    timestamp: 1,
    thread_id: 'x',
    event_type: 'cognition_in',
    payload: { text: 'OUTSIDE-SECRET' },
  };
  writeFileSync(path, `${JSON.stringify(line)}\n`);
  return path;
}

describe('thread records planted by a repository', () => {
  it('the viewer answers promptly and refuses a thread.json linked to /dev/zero and a transcript linked outside', async () => {
    const fx = fixture();
    const { id, dir } = await lookThread();
    rmSync(join(dir, 'thread.json'));
    symlinkSync('/dev/zero', join(dir, 'thread.json'));
    rmSync(join(dir, 'transcript.jsonl'));
    symlinkSync(outsideSecret(), join(dir, 'transcript.jsonl'));
    const view = await startView(fx.project, fx.env);
    try {
      const base = new URL(view.url).pathname;
      const tree = await get(view.port, `${base}api/threads`);
      expect(tree.status).toBe(200);
      expect(JSON.parse(tree.body).threads.map((t: { thread_id: string }) => t.thread_id)).toContain(id);
      const slice = await get(view.port, `${base}api/transcript?id=${encodeURIComponent(id)}&offset=0`);
      expect(slice.status).toBe(422);
      expect(JSON.parse(slice.body)).toMatchObject({ error_type: 'INTEGRITY' });
      expect(slice.body).toMatch(/symbolic link/);
      expect(slice.body).not.toContain('OUTSIDE-SECRET');
      const detail = JSON.parse(
        (await get(view.port, `${base}api/thread?id=${encodeURIComponent(id)}`)).body,
      );
      expect(detail.integrity.valid).toBe(false);
      expect(detail.integrity.thread_json.error).toMatch(/symbolic link/);
      expect(detail.integrity.transcript.error).toMatch(/symbolic link/);
    } finally {
      await view.stop();
    }
  }, 60_000);

  it("verifies at most a bounded transcript in the viewer's detail, and serves it in bounded slices", async () => {
    const fx = fixture();
    const { id, dir } = await lookThread();
    // Sparse: 200 MiB on paper, nothing on disk.
    truncateSync(join(dir, 'transcript.jsonl'), 200 * 1024 * 1024);
    const view = await startView(fx.project, fx.env);
    try {
      const base = new URL(view.url).pathname;
      const detail = JSON.parse(
        (await get(view.port, `${base}api/thread?id=${encodeURIComponent(id)}`)).body,
      );
      expect(detail.integrity.transcript).toMatchObject({ valid: false });
      expect(detail.integrity.transcript.error).toMatch(/more than the 67108864 read here/);
      const slice = JSON.parse(
        (await get(view.port, `${base}api/transcript?id=${encodeURIComponent(id)}&offset=0`)).body,
      );
      expect(slice.events.map((e: { event_type: string }) => e.event_type)).toContain('thread_completed');
      expect(slice.next_offset).toBeLessThanOrEqual(512 * 1024);
    } finally {
      await view.stop();
    }
  }, 60_000);

  it('tail and show refuse a transcript linked to a file outside the project, printing none of it', async () => {
    const fx = fixture();
    const { id, dir } = await lookThread();
    rmSync(join(dir, 'transcript.jsonl'));
    symlinkSync(outsideSecret(), join(dir, 'transcript.jsonl'));
    const tailed = await ryeCli(['threads', 'tail', id, '--project', fx.project], { env: fx.env });
    expect(tailed.code).not.toBe(0);
    expect(tailed.stdout + tailed.stderr).not.toContain('OUTSIDE-SECRET');
    expect(tailed.stdout + tailed.stderr).toMatch(/symbolic link/);
    expect(tailed.stderr).not.toMatch(/\n\s+at /); // a typed error, not a stack
    const shown = await ryeCli(['threads', 'show', id, '--json', '--project', fx.project], { env: fx.env });
    expect(shown.json, shown.stdout + shown.stderr).toMatchObject({ integrity: { valid: false } });
    expect(shown.stdout).toMatch(/symbolic link/);
  }, 60_000);
});
