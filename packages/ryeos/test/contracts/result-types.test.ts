/** The facade's replies are typed unions: a caller narrows on `status` and reads known fields. */
import type { ErrorEnvelope, LoadResponse, SearchResponse, SearchScope } from '@ryeos/executor';
import { describe, expectTypeOf, it } from 'vitest';
import type { LoadEnvelope, Rye, SearchEnvelope, SearchRequest, SignEnvelope } from '../../src/index.js';

type Signed = Extract<SignEnvelope, { status: 'signed' }>;
type Completed = Extract<SignEnvelope, { status: 'completed' }>;

describe('result shapes of the API', () => {
  it('search and load answer their response or an error envelope', () => {
    expectTypeOf<ReturnType<Rye['search']>>().toEqualTypeOf<Promise<SearchEnvelope>>();
    expectTypeOf<SearchEnvelope>().toEqualTypeOf<SearchResponse | ErrorEnvelope>();
    expectTypeOf<ReturnType<Rye['load']>>().toEqualTypeOf<Promise<LoadEnvelope>>();
    expectTypeOf<LoadEnvelope>().toEqualTypeOf<LoadResponse | ErrorEnvelope>();
    expectTypeOf<SearchRequest['scope']>().toEqualTypeOf<SearchScope>();
  });

  it('sign replies list their fields: no index signature where the fields are known', () => {
    expectTypeOf<ReturnType<Rye['sign']>>().toEqualTypeOf<Promise<SignEnvelope>>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof Signed>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof Completed>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof SearchResponse>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof LoadResponse>();
  });
});
