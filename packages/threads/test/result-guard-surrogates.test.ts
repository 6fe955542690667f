/** A shortened tool result goes to the model on whole characters (issue 28 point 3). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ResultGuard } from '../src/runner/result-guard.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('the result guard cuts on whole characters', () => {
  it('a long string, object content and a preview never end in half an emoji', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rye-guard-'));
    dirs.push(dir);
    const guard = new ResultGuard(dir);
    const results: unknown[] = [];
    for (const pad of ['', 'a']) {
      const emoji = pad + '😀'.repeat(3000);
      results.push(emoji, { content: emoji, note: emoji }, [emoji]);
    }
    for (const [i, result] of results.entries()) {
      for (const ratio of [0, 0.9]) {
        const guarded = await guard.guard(`c${i}-${ratio}`, result, ratio);
        // Parsing undoes the escapes JSON.stringify writes for a lone surrogate.
        const shown = JSON.stringify(JSON.parse(guarded.content));
        expect(LONE_SURROGATE.test(JSON.parse(guarded.content).content ?? ''), `result ${i}`).toBe(false);
        expect(shown).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
      }
    }
  });
});
