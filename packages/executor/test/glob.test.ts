import { describe, expect, it } from 'vitest';
import { globMatcher } from '../src/sign.js';

describe('sign globs (fnmatch, as the original)', () => {
  it('* crosses folders when the pattern has a slash; names match at any depth otherwise', () => {
    expect(globMatcher('acme/*')('acme/files/reader')).toBe(true);
    expect(globMatcher('acme/*')('other/acme/x')).toBe(false);
    expect(globMatcher('*')('a/b/c')).toBe(true);
    expect(globMatcher('read*')('acme/files/reader')).toBe(true);
    expect(globMatcher('read*')('acme/reader/x')).toBe(false);
  });

  it('? and classes; regex characters are literal', () => {
    expect(globMatcher('v?')('v1')).toBe(true);
    expect(globMatcher('v[0-9]')('v7')).toBe(true);
    expect(globMatcher('v[!0-9]')('v7')).toBe(false);
    expect(globMatcher('a.b')('axb')).toBe(false);
    expect(globMatcher('a+b')('a+b')).toBe(true);
  });
});
