import { describe, expect, it } from 'vitest';
import { makeThreadId } from '../src/index.js';

describe('makeThreadId', () => {
  it('is <directive>/<leaf>-<epoch_ms>', () => {
    expect(makeThreadId('acme/release/summarize', 1700000000123)).toBe(
      'acme/release/summarize/summarize-1700000000123',
    );
  });

  it('increments the timestamp until the id is free', () => {
    const taken = new Set(['x/x-5', 'x/x-6']);
    expect(makeThreadId('x', 5, (id) => taken.has(id))).toBe('x/x-7');
  });
});
