/**
 * The viewer shows threads wherever they run (issue 33): with RYE_DATABASE_URL its tree comes from
 * the PostgreSQL store, not the project's SQLite registry, and the thread's detail and transcript
 * are served as they are for a local thread.
 */
import { get } from 'node:http';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';
import { startView } from './viewer-helpers.js';

const fixture = useLookFixture();

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

function getJson(port: number, path: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(body) as Record<string, unknown>);
        } catch {
          reject(new Error(`${path} answered ${res.statusCode}: ${body.slice(0, 300)}`));
        }
      });
    }).on('error', reject);
  });
}

const idsOf = (tree: Record<string, unknown>) =>
  (tree.threads as Array<{ thread_id: string }>).map((thread) => thread.thread_id);

describe('rye threads view with the PostgreSQL store', () => {
  it('lists a thread whose row is in PostgreSQL and serves its detail and transcript', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    await fx.serve(LOOK_SCRIPT);
    fx.env.RYE_DATABASE_URL = url;
    fx.refresh();
    const reply = await fx.rye.execute({ item_id: 'directive:acme/look', thread: 'fork' });
    expect(reply.status, JSON.stringify(reply)).toBe('success');
    const id = String(reply.thread_id);
    const rows = await postgres.sql<{ status: string }>(
      url,
      'SELECT status FROM ryeos.threads WHERE thread_id = $1',
      [id],
    );
    expect(rows).toEqual([{ status: 'completed' }]);

    const view = await startView(fx.project, fx.env);
    try {
      const base = new URL(view.url).pathname;
      expect(idsOf(await getJson(view.port, `${base}api/threads`))).toContain(id);
      const detail = await getJson(view.port, `${base}api/thread?id=${encodeURIComponent(id)}`);
      expect(detail).toMatchObject({ integrity: { valid: true }, thread: { thread_id: id } });
      const slice = await getJson(view.port, `${base}api/transcript?id=${encodeURIComponent(id)}&offset=0`);
      expect((slice.events as Array<{ event_type: string }>).map((e) => e.event_type)).toContain(
        'thread_completed',
      );
    } finally {
      await view.stop();
    }

    // Without the database the viewer reads the project's own registry, which never had this
    // thread: the tree above came from PostgreSQL.
    const { RYE_DATABASE_URL: _, ...local } = fx.env;
    const localView = await startView(fx.project, local);
    try {
      const base = new URL(localView.url).pathname;
      expect(idsOf(await getJson(localView.port, `${base}api/threads`))).not.toContain(id);
    } finally {
      await localView.stop();
    }
  });
});
