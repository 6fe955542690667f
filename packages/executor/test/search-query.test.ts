import { describe, expect, it } from 'vitest';
import { compareVersions, compileFilters } from '../src/search/filters.js';
import { compileGlob, globMatches, levenshtein, makeDoc, proximityMatches } from '../src/search/match.js';
import { evaluate, parseQuery, queryTerms } from '../src/search/query.js';
import { inNamespace, parseScope, SCOPE_ERROR } from '../src/search/scope.js';

const doc = makeDoc('Read the contents of a file from disk. web-fetch thread_list');
const hit = (query: string, fuzzy = 0) => evaluate(parseQuery(query), doc, fuzzy);

describe('query parser', () => {
  it('builds the AST: implicit AND, OR, NOT, parentheses, phrase, wildcard', () => {
    expect(parseQuery('')).toEqual({ type: 'all' });
    expect(parseQuery('   ')).toEqual({ type: 'all' });
    expect(parseQuery('a b')).toEqual({
      type: 'and',
      children: [
        { type: 'term', term: 'a' },
        { type: 'term', term: 'b' },
      ],
    });
    expect(parseQuery('a OR b c')).toMatchObject({
      type: 'or',
      children: [{ type: 'term' }, { type: 'and' }],
    });
    expect(parseQuery('NOT a')).toEqual({ type: 'not', child: { type: 'term', term: 'a' } });
    expect(parseQuery('"Exact Phrase"')).toEqual({ type: 'phrase', phrase: 'exact phrase' });
    expect(parseQuery('File*')).toMatchObject({ type: 'wildcard', pattern: 'file*' });
    expect(parseQuery('(a OR b) AND c')).toMatchObject({
      type: 'and',
      children: [{ type: 'or' }, { type: 'term', term: 'c' }],
    });
  });

  it('keywords are case-insensitive and count only before whitespace or the end', () => {
    expect(parseQuery('a or b')).toMatchObject({ type: 'or' });
    expect(parseQuery('orange android')).toMatchObject({
      type: 'and',
      children: [
        { type: 'term', term: 'orange' },
        { type: 'term', term: 'android' },
      ],
    });
    expect(parseQuery('notes')).toEqual({ type: 'term', term: 'notes' });
  });

  it('tolerates an unterminated quote, a missing ) and a stray )', () => {
    expect(parseQuery('"open ended')).toEqual({ type: 'phrase', phrase: 'open ended' });
    expect(parseQuery('(a OR b')).toMatchObject({ type: 'or' });
    expect(() => parseQuery(') a (')).not.toThrow();
    expect(() => parseQuery('AND OR NOT')).not.toThrow();
    expect(() => parseQuery('a AND')).not.toThrow();
  });

  it('evaluates terms as substrings, phrases exactly, wildcards per word', () => {
    expect(hit('file')).toBe(true);
    expect(hit('ile')).toBe(true); // substring
    expect(hit('read disk')).toBe(true);
    expect(hit('read missing')).toBe(false);
    expect(hit('missing OR disk')).toBe(true);
    expect(hit('read NOT disk')).toBe(false);
    expect(hit('(missing OR read) AND NOT nothing')).toBe(true);
    expect(hit('"a file from"')).toBe(true);
    expect(hit('"file a"')).toBe(false);
    expect(hit('conten*')).toBe(true);
    expect(hit('*tents')).toBe(true);
    expect(hit('*nten*')).toBe(true);
    expect(hit('fetch*')).toBe(true); // hyphens split words
    expect(hit('web-fe*')).toBe(false); // no word contains a hyphen
    expect(hit('*_list')).toBe(true); // underscores do not
    expect(hit('ead*')).toBe(false); // anchored to whole words
  });

  it('falls back to Levenshtein distance only when fuzzy is on, phrases never', () => {
    expect(hit('contnts')).toBe(false);
    expect(hit('contnts', 1)).toBe(true);
    expect(hit('cntnts', 1)).toBe(false);
    expect(hit('cntnts', 2)).toBe(true);
    expect(hit('"contnts"', 2)).toBe(false);
  });

  it('collects proximity terms, none from NOT', () => {
    expect(queryTerms(parseQuery('a "b c" d* NOT e (f OR g)'))).toEqual(['a', 'b', 'c', 'd', 'f', 'g']);
  });
});

describe('text primitives', () => {
  it('computes bounded Levenshtein distances', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(levenshtein('same', 'same')).toBe(0);
    expect(levenshtein('kitten', 'sitting', 1)).toBe(2); // capped at max + 1
  });

  it('globs like fnmatch', () => {
    expect(globMatches(compileGlob('f?le'), makeDoc('file'))).toBe(true);
    expect(globMatches(compileGlob('a.c*'), makeDoc('abc'))).toBe(false);
  });

  it('checks proximity against the first term', () => {
    const text = makeDoc('alpha beta gamma delta epsilon zeta');
    expect(proximityMatches(text, ['alpha', 'zeta'], 4)).toBe(false);
    expect(proximityMatches(text, ['alpha', 'zeta'], 5)).toBe(true);
    expect(proximityMatches(text, ['alpha', 'missing'], 50)).toBe(false);
    expect(proximityMatches(text, ['alpha'], 0)).toBe(true);
  });
});

describe('scope', () => {
  it('parses shorthand and capability forms', () => {
    expect(parseScope('tool')).toEqual({ kind: 'tool', namespace: undefined });
    expect(parseScope('tool.*')).toEqual({ kind: 'tool', namespace: undefined });
    expect(parseScope('tool.rye.core.*')).toEqual({ kind: 'tool', namespace: 'rye/core' });
    expect(parseScope('knowledge.a.b')).toEqual({ kind: 'knowledge', namespace: 'a/b' });
    expect(parseScope('rye.search.directive.*')).toEqual({ kind: 'directive', namespace: undefined });
    expect(parseScope('rye.anything.tool.rye.core*')).toEqual({ kind: 'tool', namespace: 'rye/core' });
    for (const bad of ['', 'widget', 'rye.search.*', 'rye.search', 'rye.search.widget.x']) {
      expect(() => parseScope(bad)).toThrow(SCOPE_ERROR);
    }
  });

  it('matches whole segments', () => {
    expect(inNamespace('rye/core/x', 'rye/core')).toBe(true);
    expect(inNamespace('rye/core', 'rye/core')).toBe(true);
    expect(inNamespace('rye/core-x/y', 'rye/core')).toBe(false);
    expect(inNamespace('anything', undefined)).toBe(true);
  });
});

describe('filters', () => {
  const item: Record<string, unknown> = {
    category: 'Web',
    version: '1.4.2',
    tags: ['net', 'http'],
    author: 'alice',
    created_at: '2024-03-01T00:00:00Z',
  };
  const pass = (filters: Record<string, unknown>, target = item) =>
    compileFilters(filters)!((key) => target[key]);

  it('compares versions numerically in three parts', () => {
    expect(compareVersions('1.10.0', '1.9.9')).toBe(1);
    expect(compareVersions('1.2', '1.2.0')).toBe(0);
    expect(compareVersions('2.0.0', '10.0.0')).toBe(-1);
    expect(compareVersions('1.x', '2.0.0')).toBe(0);
  });

  it('supports equality, negation, versions, lists and dates', () => {
    expect(pass({ category: 'web' })).toBe(true);
    expect(pass({ category: 'net' })).toBe(false);
    expect(pass({ author: '!bob' })).toBe(true);
    expect(pass({ author: '!alice' })).toBe(false);
    expect(pass({ tags: '!net' })).toBe(false);
    expect(pass({ tags: 'http' })).toBe(true);
    expect(pass({ tags: ['ftp', 'http'] })).toBe(true);
    expect(pass({ tags: ['ftp'] })).toBe(false);
    expect(pass({ author: ['bob', 'alice'] })).toBe(true);
    expect(pass({ version: '>=1.4.2' })).toBe(true);
    expect(pass({ version: '>1.4.2' })).toBe(false);
    expect(pass({ version: '<1.10' })).toBe(true);
    expect(pass({ version: '<=1.4.1' })).toBe(false);
    expect(pass({ missing: 'x' })).toBe(false);
    expect(pass({ date_from: '2024-01-01' })).toBe(true);
    expect(pass({ date_from: '2024-06-01' })).toBe(false);
    expect(pass({ date_to: '2024-06-01' })).toBe(true);
    expect(pass({ date_to: '2023-12-31' })).toBe(false);
    expect(pass({ date_from: '2030-01-01' }, {})).toBe(true); // undated passes
    expect(pass({ category: 'web', version: '>=2' })).toBe(false); // all must hold
  });
});

describe('stray parentheses', () => {
  it('a stray ) does not cut off the rest of the query', () => {
    expect(parseQuery('bash) NOT bash')).toEqual(parseQuery('bash NOT bash'));
  });
});
