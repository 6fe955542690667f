/**
 * The viewer's page with a registry a repository shipped (attack round on issue 33, finding 5):
 * a thread whose details cannot be read shows that, as an error, with nothing of the thread shown
 * before it left under its title; registry spend is marked unverified and a negative one flagged.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';
import { browserPath, CHROMIUM_ARGS, startView } from './viewer-helpers.js';

interface PageNode {
  textContent: string | null;
  className: string;
  children: { length: number };
}
declare const document: {
  getElementById(id: string): PageNode | null;
  body: PageNode;
};

/** The registry's own SQLite driver, as far as this test writes with it (the package ships no types). */
const Database = createRequire(import.meta.url)('better-sqlite3') as new (
  path: string,
) => { prepare(sql: string): { run(...values: unknown[]): unknown }; close(): void };

const executable = browserPath();
let browser: Browser | undefined;
beforeAll(async () => {
  if (!executable) return;
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: executable, args: CHROMIUM_ARGS });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const fixture = useLookFixture();
/** A registry row no thread folder can be made for (the id leaves the state folder). */
const PLANTED = '../planted-thread';

describe.skipIf(!executable)('the viewer page and a planted registry row', () => {
  it('clears a failed detail and marks it as an error; flags negative registry spend', async () => {
    const fx = fixture();
    await fx.serve(LOOK_SCRIPT);
    const reply = await fx.rye.execute({ item_id: 'directive:acme/look', thread: 'fork' });
    expect(reply.status, JSON.stringify(reply)).toBe('success');
    const good = String(reply.thread_id);
    const db = new Database(join(fx.project, '.ai/state/threads/registry.db'));
    db.prepare(
      "INSERT INTO threads (thread_id, directive, status, created_at, updated_at, spend, turns) VALUES (?, 'acme/evil', 'completed', '2026-11-29T10:00:00Z', '2026-11-29T10:00:00Z', -4.9957, 3)",
    ).run(PLANTED);
    db.close();

    const view = await startView(fx.project, fx.env);
    const page = await browser!.newPage();
    try {
      await page.goto(view.url);
      await page.locator(`#tree tr[data-thread-id="${good}"]`).click();
      await page.waitForFunction(() => document.getElementById('verification')?.className === 'ok');
      expect(await page.locator('#capabilities li').count()).toBeGreaterThan(0);

      await page.locator(`#tree tr[data-thread-id="${PLANTED}"]`).click();
      await page.waitForFunction(() =>
        /cannot read/i.test(document.getElementById('verification')?.textContent ?? ''),
      );
      expect(await page.locator('#verification').getAttribute('class')).toBe('bad');
      expect(await page.locator('#detail-title').textContent()).toBe(PLANTED);
      expect(await page.locator('#detail-meta').textContent()).toBe('');
      expect(await page.locator('#capabilities li').count()).toBe(0);
      expect(await page.evaluate(() => document.body.textContent ?? '')).not.toMatch(/undefined/);

      const planted = page.locator(`#tree tr[data-thread-id="${PLANTED}"] .c-spend`);
      expect(await planted.textContent()).toBe('invalid');
      expect(await planted.getAttribute('class')).toContain('invalid');
      const honest = page.locator(`#tree tr[data-thread-id="${good}"] .c-spend`);
      expect(await honest.getAttribute('class')).toContain('unverified');
      expect(await honest.getAttribute('title')).toMatch(/not verified/);
      expect(await page.locator('#registry-note').textContent()).toMatch(/unsigned, not verified/);

      // Back on the real thread: what its own signed record says it spent.
      await honest.click();
      await page.waitForFunction(() => document.getElementById('verification')?.className === 'ok');
      expect(await page.locator('#detail-meta').textContent()).toMatch(/spent \(its signed record\): \$\d/);
    } finally {
      await page.close();
      await view.stop();
    }
  }, 120_000);
});
