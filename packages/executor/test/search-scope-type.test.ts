import { describe, expect, expectTypeOf, it } from 'vitest';
import type { SearchRequest, SearchResponse, SearchScope, SearchSpace } from '../src/index.js';
import { isSearchScope } from '../src/index.js';

describe('search scopes are a typed union', () => {
  it('isSearchScope accepts what parseScope accepts, and nothing else', () => {
    for (const scope of [
      'tool',
      'knowledge',
      'tool.rye.core.*',
      'rye.search.directive.*',
      'rye.search.tool.rye.core',
    ]) {
      expect(isSearchScope(scope), scope).toBe(true);
    }
    for (const scope of ['', 'widget', 'rye.search.*', 'tools', 42, undefined]) {
      expect(isSearchScope(scope), String(scope)).toBe(false);
    }
  });

  it('the request and the response say which scopes and spaces there are', () => {
    expectTypeOf<SearchRequest['scope']>().toEqualTypeOf<SearchScope>();
    expectTypeOf<'tool.rye.core.*'>().toExtend<SearchScope>();
    expectTypeOf<'rye.search.knowledge.rye'>().toExtend<SearchScope>();
    expectTypeOf<'widget'>().not.toExtend<SearchScope>();
    expectTypeOf<SearchResponse['scope']>().toEqualTypeOf<SearchScope>();
    expectTypeOf<SearchResponse['space']>().toEqualTypeOf<SearchSpace>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof SearchResponse>();
  });
});
