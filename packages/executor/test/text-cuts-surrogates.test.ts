/** Descriptions and previews an agent reads are cut on whole characters (issue 28 point 3). */
import { describe, expect, it } from 'vitest';
import { parameterSummary } from '../src/parameter-summary.js';
import { previewOf } from '../src/search/entry.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('cuts of item text keep whole characters', () => {
  for (const pad of ['', 'a']) {
    const emoji = pad + '😀'.repeat(500);
    it(`a parameter description (${JSON.stringify(pad)} first)`, () => {
      const summary = parameterSummary({
        type: 'object',
        properties: { path: { type: 'string', description: emoji } },
        required: ['path'],
      });
      expect(summary.path).toContain('…');
      expect(LONE_SURROGATE.test(summary.path!)).toBe(false);
    });

    it(`a search preview (${JSON.stringify(pad)} first)`, () => {
      const preview = previewOf(emoji);
      expect(preview.length).toBeGreaterThan(190);
      expect(LONE_SURROGATE.test(preview)).toBe(false);
    });
  }
});
