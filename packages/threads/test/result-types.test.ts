import type { ErrorType } from '@ryeos/lillux';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { LimitCode, PreparedThread, ThreadErrorCode, ThreadHost, ThreadResult } from '../src/index.js';
import { LIMIT_CODES, runPreparedThread, THREAD_ERROR_CODES } from '../src/index.js';
import { failureCodes } from '../src/result-codes.js';

describe('a failed thread says why in the closed codes', () => {
  it('a limit breach is a limit; a chain too long too; any other failure an execution error', () => {
    expect(failureCodes({ limit_code: 'turns_exceeded' })).toEqual({
      error_type: 'limit',
      limit_code: 'turns_exceeded',
    });
    expect(failureCodes({ error_code: 'chain_length_exceeded' })).toEqual({
      error_type: 'limit',
      error_code: 'chain_length_exceeded',
    });
    expect(failureCodes({ error_code: 'required_outputs_missing' })).toEqual({
      error_type: 'execution',
      error_code: 'required_outputs_missing',
    });
    expect(failureCodes({})).toEqual({ error_type: 'execution' });
  });

  it("a hook's control result cannot put a code outside the closed sets into the result", () => {
    // Control results are repository data spread into the loop's result.
    const planted = JSON.parse('{"error_type":"bogus","limit_code":"made_up","error_code":"whatever"}');
    expect(failureCodes(planted)).toEqual({
      error_type: 'execution',
    });
    expect(failureCodes({ error_type: 'permission' })).toEqual({ error_type: 'permission' });
  });

  it('names every code the runner emits, once', () => {
    expect([...LIMIT_CODES]).toEqual([
      'turns_exceeded',
      'tokens_exceeded',
      'spend_exceeded',
      'duration_seconds_exceeded',
    ]);
    expect([...THREAD_ERROR_CODES]).toEqual(['chain_length_exceeded', 'required_outputs_missing']);
  });
});

describe('types at the boundary', () => {
  it('ThreadResult: closed unions for its codes, no index signature', () => {
    expectTypeOf<ThreadResult['error_type']>().toEqualTypeOf<ErrorType | undefined>();
    expectTypeOf<ThreadResult['limit_code']>().toEqualTypeOf<LimitCode | undefined>();
    expectTypeOf<ThreadResult['error_code']>().toEqualTypeOf<ThreadErrorCode | undefined>();
    // With an index signature every string key would be a key of the type.
    expectTypeOf<'no_such_field'>().not.toExtend<keyof ThreadResult>();
  });

  it('runPreparedThread takes a PreparedThread, not unknown', () => {
    expectTypeOf(runPreparedThread).parameter(1).toEqualTypeOf<PreparedThread>();
    expectTypeOf<Parameters<typeof runPreparedThread>[0]>().toEqualTypeOf<ThreadHost>();
    // @ts-expect-error a parsed JSON value must go through parsePreparedThread first
    void (() => runPreparedThread({} as ThreadHost, {} as unknown, { threadId: 't' }));
  });
});
