import { describe, expect, it } from 'vitest';
import { renderReturns } from '../src/index.js';

describe('renderReturns', () => {
  it('renders one <output> per declared output, self-closing without a description', () => {
    expect(
      renderReturns([
        { name: 'summary', type: 'string', required: true, description: 'The release note text' },
        { name: 'signed' },
      ]),
    ).toBe(
      '<returns>\n  <output name="summary">The release note text</output>\n  <output name="signed" />\n</returns>',
    );
  });

  it('accepts the dict form and escapes XML', () => {
    expect(renderReturns({ 'a&b': 'x < y' })).toBe(
      '<returns>\n  <output name="a&amp;b">x &lt; y</output>\n</returns>',
    );
  });

  it('renders nothing when no outputs are declared', () => {
    expect(renderReturns([])).toBe('');
  });
});
