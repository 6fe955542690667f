/** A knowledge entry's search preview, which agents read in search results, keeps whole characters (issue 28 point 3). */
import { describe, expect, it } from 'vitest';
import { knowledgeSearchFields } from '../src/facts.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('knowledge search preview', () => {
  for (const pad of ['', 'a']) {
    it(`is cut between characters (${JSON.stringify(pad)} before the emoji)`, () => {
      const text = ['```yaml', 'name: smile', 'title: Smile', '```', '', pad + '😀'.repeat(300)].join('\n');
      const preview = knowledgeSearchFields(text, 'smile.md', 'smile').preview ?? '';
      expect(preview.length).toBeGreaterThan(190);
      expect(LONE_SURROGATE.test(preview)).toBe(false);
    });
  }
});
