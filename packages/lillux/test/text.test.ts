import { describe, expect, it } from 'vitest';
import { clipText } from '../src/index.js';

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('clipText (issue 28 point 15: a cut never halves a character)', () => {
  it('never ends in half a surrogate pair, at any cut', () => {
    for (const text of ['😀'.repeat(5), `a${'😀'.repeat(5)}`, 'ab😀c😀']) {
      for (let max = 0; max <= text.length + 1; max++) {
        const cut = clipText(text, max);
        expect(text.startsWith(cut)).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(text.length, max) - 1);
        expect(LONE.test(cut)).toBe(false);
      }
    }
  });

  it('leaves short text alone and clamps odd lengths', () => {
    expect(clipText('abc', 3)).toBe('abc');
    expect(clipText('abc', -1)).toBe('');
    expect(clipText('abcd', 2.7)).toBe('ab');
  });
});
