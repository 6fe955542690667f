import { describe, expect, it } from 'vitest';
import {
  evaluateExpression,
  interpolate,
  interpolateAction,
  interpolateString,
  interpolateText,
} from '../src/hooks/interpolate.js';

const context = {
  limit_code: 'turns_exceeded',
  current_value: 25,
  cost: { turns: 4, spend: 0.5 },
  error: { message: 'Overloaded', code: null },
  outputs: { summary: 'done', files: ['a.ts'] },
  inputs: { env: 'prod', count: 3, blank: null },
  project: 'deploy',
};

describe('${…}', () => {
  it('fills dot paths embedded in text', () => {
    expect(interpolateString('turn ${cost.turns} of ${limit_code}', context)).toBe(
      'turn 4 of turns_exceeded',
    );
  });

  it('an exact ${…} keeps the raw type', () => {
    expect(interpolateString('${current_value}', context)).toBe(25);
    expect(interpolateString('${cost}', context)).toEqual({ turns: 4, spend: 0.5 });
    expect(interpolateString('${outputs.files}', context)).toEqual(['a.ts']);
    expect(interpolateString('${error.code}', context)).toBeNull();
    expect(interpolateString('${nope}', context)).toBeNull();
  });

  it('embedded null is empty and objects are JSON', () => {
    expect(interpolateString('code=[${error.code}]', context)).toBe('code=[]');
    expect(interpolateString('cost: ${cost}', context)).toBe('cost: {"turns":4,"spend":0.5}');
  });

  it('${a || b} takes the first non-null alternative', () => {
    expect(interpolateString('${error.code || error.message}', context)).toBe('Overloaded');
    expect(interpolateString('${nope || missing || cost.turns}', context)).toBe(4);
    expect(interpolateString('${nope || missing}', context)).toBeNull();
    expect(interpolateString("x=${nope || 'fallback'}", context)).toBe('x=fallback');
    expect(evaluateExpression(' limit_code || cost ', context)).toBe('turns_exceeded');
  });

  it('interpolateText always yields text', () => {
    expect(interpolateText('${current_value}', context)).toBe('25');
    expect(interpolateText('${nope}', context)).toBe('');
  });
});

describe('{input:…}', () => {
  it('fills present inputs', () => {
    expect(interpolateString('env {input:env}, n={input:count}', context)).toBe('env prod, n=3');
  });

  it('keeps a missing required ref literal', () => {
    expect(interpolateString('x {input:region}', context)).toBe('x {input:region}');
  });

  it('{input:k?} is empty when missing', () => {
    expect(interpolateString('[{input:region?}]', context)).toBe('[]');
    expect(interpolateString('[{input:env?}]', context)).toBe('[prod]');
  });

  it('{input:k:def} and {input:k|def} give the default when missing (or null)', () => {
    expect(interpolateString('{input:region:eu-west-1}', context)).toBe('eu-west-1');
    expect(interpolateString('{input:region|us}', context)).toBe('us');
    expect(interpolateString('{input:blank|none}', context)).toBe('none');
    expect(interpolateString('{input:env:dev}', context)).toBe('prod');
  });

  it('without context.inputs every ref is treated as missing', () => {
    expect(interpolateString('{input:a} {input:b?} {input:c:d}', {})).toBe('{input:a}  d');
  });

  it('substituted values are never scanned again', () => {
    const ctx = { x: '${y}', y: 'no', inputs: { v: '{input:w}', w: 'no' } };
    expect(interpolateString('a ${x} {input:v}', ctx)).toBe('a ${y} {input:w}');
  });
});

describe('recursive interpolation of actions', () => {
  it('walks params (lists and mappings) and fills item_id', () => {
    const action = {
      primary: 'execute' as const,
      item_type: 'tool',
      item_id: 'project/{input:env}/notify',
      params: {
        event_type: 'checkpoint_saved',
        payload: { turn: '${cost.turns}', cost: '${cost}', notes: ['at ${cost.turns}', 7, true] },
      },
    };
    expect(interpolateAction(action, context)).toEqual({
      primary: 'execute',
      item_type: 'tool',
      item_id: 'project/prod/notify',
      params: {
        event_type: 'checkpoint_saved',
        payload: { turn: 4, cost: { turns: 4, spend: 0.5 }, notes: ['at 4', 7, true] },
      },
    });
    // the original is untouched
    expect(action.params.payload.turn).toBe('${cost.turns}');
  });

  it('leaves non-string values and keys alone', () => {
    expect(interpolate({ '${k}': 1, n: null, b: false }, context)).toEqual({ '${k}': 1, n: null, b: false });
  });
});
