import { describe, expect, it } from 'vitest';
import { canonicalRef, parseRef } from '../src/index.js';

describe('parseRef', () => {
  it('splits canonical refs and keeps plain ids kind-less', () => {
    expect(parseRef('tool:acme/text/wordcount')).toEqual({ kind: 'tool', id: 'acme/text/wordcount' });
    expect(parseRef('directive:x/y')).toEqual({ kind: 'directive', id: 'x/y' });
    expect(parseRef('knowledge:k')).toEqual({ kind: 'knowledge', id: 'k' });
    expect(parseRef('config:a/b')).toEqual({ kind: 'config', id: 'a/b' });
    expect(parseRef('rye/bash')).toEqual({ kind: undefined, id: 'rye/bash' });
    expect(canonicalRef('tool', 'rye/bash')).toBe('tool:rye/bash');
  });

  it('rejects an empty id after the prefix', () => {
    expect(() => parseRef('tool:')).toThrow(
      "Canonical ref must include an ID after 'tool:' (e.g. 'tool:my/item')",
    );
    expect(() => parseRef('  ')).toThrow('item_id is required.');
  });

  it('refuses ids that would escape their space', () => {
    for (const bad of ['../etc/passwd', 'a/../../b', '/etc/passwd', 'C:/x', 'a\\b', 'a//b', './a']) {
      expect(() => parseRef(`tool:${bad}`), bad).toThrow(/Invalid item id/);
    }
  });
});
