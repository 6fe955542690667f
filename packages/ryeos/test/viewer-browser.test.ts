/**
 * The thread viewer in a real browser (issue 33): Debian's Chromium, driven by playwright-core,
 * against `rye threads view` and threads running on the replay servers. A parent forks two async
 * children whose bash tool blocks until the test opens a gate, so everything "live" is checked
 * while the work is provably still running, never against a clock.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReplayServer } from '@ryeos/threads/testing';
import { startReplayServer } from '@ryeos/threads/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directive, type ThreadFixture, useThreadFixture } from './threads-helpers.js';
import { browserPath, CHROMIUM_ARGS, startView } from './viewer-helpers.js';

/** What the functions this file hands the page use of the browser's globals (they run there). */
interface PageNode {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageNode | null;
}
declare const document: {
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): Iterable<PageNode>;
};
declare const window: Record<string, unknown>;

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const HOSTILE = 'Plan: <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> done.';
/** Blocks until the gate file exists; its first line is computed so the call's input never shows it. */
const GATED = 'echo kid-live-$((6*7)); while [ ! -f gate ]; do sleep 0.05; done; echo kid-after-$((2+2))';

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

const fixture = useThreadFixture();

/** `acme/kid` (OpenAI wire, its own server) runs the gated command; `acme/mother` forks two and waits. */
async function familyRunning(fx: ThreadFixture): Promise<{ parent: string; kids: ReplayServer }> {
  await fx.write(
    '.ai/directives/acme/kid.md',
    directive('kid', {
      metadata:
        '<model tier="fast" provider="openai"/><limits turns="4" spend="0.5"/><permissions><execute><tool>rye.bash</tool></execute></permissions>',
      outputs: OUTPUTS,
    }),
  );
  await fx.sign('directive:acme/kid');
  await fx.write(
    '.ai/directives/acme/mother.md',
    directive('mother', {
      metadata:
        '<model tier="fast" provider="anthropic"/><limits turns="5" spend="3"/><permissions><execute><tool>rye.agent.threads.orchestrator</tool><tool>rye.bash</tool><directive>acme.kid</directive></execute></permissions>',
      outputs: OUTPUTS,
    }),
  );
  await fx.sign('directive:acme/mother');
  // Each child plays the script from its start (per_conversation): both run the gated command.
  const kids = await startReplayServer({
    per_conversation: true,
    turns: [
      { text: HOSTILE, tool_calls: [{ name: 'rye_bash', input: { command: GATED } }] },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'kid done' } }] },
    ],
  });
  fx.env.OPENAI_BASE_URL = `${kids.url}/v1`;
  fx.env.OPENAI_API_KEY = 'test-key';
  const fork = { name: 'rye_execute', input: { item_id: 'directive:acme/kid', thread: 'fork', async: true } };
  await fx.serve({
    turns: [
      { tool_calls: [fork, fork] },
      {
        tool_calls: [
          {
            name: 'rye_agent_threads_orchestrator',
            input: { operation: 'wait_threads', timeout: 120 },
            input_from_results: { key: 'thread_ids', field: 'thread_id' },
          },
        ],
      },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'all done' } }] },
    ],
  });
  const reply = await fx.rye.execute({ item_id: 'directive:acme/mother', thread: 'fork', async: true });
  expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', async: true });
  return { parent: String(reply.thread_id), kids };
}

/** The tree's rows as the page shows them. */
function treeRows(page: Page) {
  return page.$$eval('#tree tbody tr', (rows) =>
    rows.map((row) => ({
      id: row.getAttribute('data-thread-id') ?? '',
      status: row.querySelector('.c-status')?.textContent ?? '',
      spend: Number(row.querySelector('.c-spend')?.getAttribute('data-value')),
      subtree: Number(row.querySelector('.c-subtree')?.getAttribute('data-value')),
      indent: row.querySelector('.indent')?.textContent ?? '',
    })),
  );
}

describe.skipIf(!executable)('rye threads view in Chromium', () => {
  it('shows the tree live, a running tool’s output, model text as text; cancel stops a child; spend adds up', async () => {
    const fx = fixture();
    const { parent, kids } = await familyRunning(fx);
    const view = await startView(fx.project, fx.env, ['--control']);
    const page = await browser!.newPage();
    try {
      await page.goto(view.url);
      // The tree updates live: the children appear under the parent while they run (the gate is shut).
      await page.waitForFunction(
        (id) =>
          [...document.querySelectorAll('#tree tbody tr')].filter(
            (row) =>
              row.getAttribute('data-thread-id') !== id &&
              row.querySelector('.c-status')?.textContent === 'running',
          ).length === 2,
        parent,
        { timeout: 60_000 },
      );
      let rows = await treeRows(page);
      expect(rows[0]!.id).toBe(parent);
      const children = rows.filter((row) => row.id !== parent);
      expect(children.map((row) => row.indent.trim().slice(0, 2)).sort()).toEqual(['└─', '├─']);

      // A child's transcript: its tool's output is on the page while the tool still runs.
      const [first, second] = children.map((row) => row.id);
      await page.click(`#tree tr[data-thread-id="${first}"]`);
      const tool = page.locator('#transcript .tool').first();
      await expect
        .poll(() => tool.locator('.tool-output').textContent(), { timeout: 30_000 })
        .toContain('kid-live-42');
      expect(await tool.locator('.tool-state').textContent()).toBe('running…');
      expect(await tool.locator('.tool-output').textContent()).not.toContain('kid-after');

      // The model's markup is shown as the characters it wrote, and none of it ran.
      const said = await page.locator('#transcript .msg.assistant .text').first().textContent();
      expect(said).toBe(HOSTILE);
      expect(await page.locator('#transcript img, #transcript script').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

      // Cancel from the page stops the first child; the second goes on once the gate opens.
      await page.click(`#tree tr[data-thread-id="${first}"] button.cancel`);
      await page.waitForFunction(
        (id) =>
          document.querySelector(`#tree tr[data-thread-id="${id}"] .c-status`)?.textContent === 'cancelled',
        first,
        { timeout: 60_000 },
      );
      writeFileSync(join(fx.project, 'gate'), '');
      await page.waitForFunction(
        ([p, s]) =>
          document.querySelector(`#tree tr[data-thread-id="${s}"] .c-status`)?.textContent === 'completed' &&
          document.querySelector(`#tree tr[data-thread-id="${p}"] .c-status`)?.textContent === 'completed',
        [parent, second],
        { timeout: 60_000 },
      );
      expect((await treeRows(page)).find((row) => row.id === first)!.status).toBe('cancelled');

      // The parent's subtree spend is its own plus its children's, as the page shows them.
      rows = await treeRows(page);
      const top = rows.find((row) => row.id === parent)!;
      const kidsSpend = rows.filter((row) => row.id !== parent).reduce((sum, row) => sum + row.spend, 0);
      expect(kidsSpend).toBeGreaterThan(rows.find((row) => row.id === second)!.spend);
      expect(top.subtree).toBeCloseTo(top.spend + kidsSpend, 10);
      const shown = await page.locator(`#tree tr[data-thread-id="${parent}"] .c-subtree`).textContent();
      expect(shown).toBe(`$${(top.spend + kidsSpend).toFixed(4)}`);
    } finally {
      await page.close();
      await view.stop();
      writeFileSync(join(fx.project, 'gate'), '');
      await kids.close();
    }
  }, 180_000);

  it('refuses a page opened without the token', async () => {
    const fx = fixture();
    const view = await startView(fx.project, fx.env);
    const page = await browser!.newPage();
    try {
      const origin = new URL(view.url).origin;
      const answer = await page.goto(`${origin}/`);
      expect(answer?.status()).toBe(403);
      expect(await page.locator('#tree').count()).toBe(0);
      const wrong = await page.goto(`${origin}/t/guessed-token/`);
      expect(wrong?.status()).toBe(403);
      const right = await page.goto(view.url);
      expect(right?.status()).toBe(200);
      await expect.poll(() => page.locator('#mode').textContent()).toBe('read-only');
      expect(await page.locator('#tree button').count()).toBe(0);
    } finally {
      await page.close();
      await view.stop();
    }
  }, 60_000);
});
