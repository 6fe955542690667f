import { describe, expect, it } from 'vitest';
import { matches, regexSearch, resolvePath } from '../src/hooks/conditions.js';

const doc = {
  directive: 'deploy-api',
  cost: { turns: 3, spend: 0.25 },
  classification: { category: 'transient', retryable: true },
  error: { message: 'upstream connect error', code: null },
  tags: ['a', 'b', { id: 'c' }],
  zero: 0,
  flag: false,
};

describe('resolvePath', () => {
  it('walks object keys and numeric array indexes', () => {
    expect(resolvePath(doc, 'cost.turns')).toBe(3);
    expect(resolvePath(doc, 'tags.1')).toBe('b');
    expect(resolvePath(doc, 'tags.2.id')).toBe('c');
  });

  it('is null when the path does not resolve, and the whole document when empty', () => {
    expect(resolvePath(doc, 'cost.missing')).toBeNull();
    expect(resolvePath(doc, 'tags.9')).toBeNull();
    expect(resolvePath(doc, 'tags.x')).toBeNull();
    expect(resolvePath(doc, 'directive.length')).toBeNull();
    expect(resolvePath(doc, 'error.code')).toBeNull();
    expect(resolvePath(doc, '')).toBe(doc);
  });

  it('never reads inherited properties', () => {
    expect(resolvePath(doc, 'constructor')).toBeNull();
    expect(resolvePath(doc, '__proto__')).toBeNull();
    expect(resolvePath(doc, 'cost.toString')).toBeNull();
  });

  it('keeps falsy values that exist', () => {
    expect(resolvePath(doc, 'zero')).toBe(0);
    expect(resolvePath(doc, 'flag')).toBe(false);
  });
});

describe('matches: forms', () => {
  it('an empty or missing condition holds', () => {
    expect(matches(undefined, doc)).toBe(true);
    expect(matches(null, doc)).toBe(true);
    expect(matches({}, doc)).toBe(true);
  });

  it('op defaults to eq', () => {
    expect(matches({ path: 'cost.turns', value: 3 }, doc)).toBe(true);
    expect(matches({ path: 'cost.turns', value: 4 }, doc)).toBe(false);
  });

  it('any, all and not combine, and nest', () => {
    const t = { path: 'cost.turns', op: 'eq', value: 3 };
    const f = { path: 'cost.turns', op: 'eq', value: 9 };
    expect(matches({ any: [f, t] }, doc)).toBe(true);
    expect(matches({ any: [f, f] }, doc)).toBe(false);
    expect(matches({ any: [] }, doc)).toBe(false);
    expect(matches({ all: [t, t] }, doc)).toBe(true);
    expect(matches({ all: [t, f] }, doc)).toBe(false);
    expect(matches({ all: [] }, doc)).toBe(true);
    expect(matches({ not: f }, doc)).toBe(true);
    expect(matches({ not: t }, doc)).toBe(false);
    expect(matches({ all: [{ any: [f, t] }, { not: { all: [t, f] } }] }, doc)).toBe(true);
  });

  it('malformed conditions are false', () => {
    expect(matches({ any: 'x' }, doc)).toBe(false);
    expect(matches({ op: 'eq', value: 1 }, doc)).toBe(false);
    expect(matches({ path: 'cost.turns', op: 7, value: 3 }, doc)).toBe(false);
    expect(matches('cost.turns', doc)).toBe(false);
  });
});

describe('matches: operators', () => {
  const m = (path: string, op: string, value?: unknown) => matches({ path, op, value }, doc);

  it('eq / ne compare deeply', () => {
    expect(m('classification', 'eq', { retryable: true, category: 'transient' })).toBe(true);
    expect(m('tags', 'eq', ['a', 'b', { id: 'c' }])).toBe(true);
    expect(m('tags', 'eq', ['a', 'b'])).toBe(false);
    expect(m('classification.retryable', 'eq', true)).toBe(true);
    expect(m('classification.retryable', 'eq', 'true')).toBe(false);
    expect(m('error.code', 'eq', null)).toBe(true);
    expect(m('cost', 'ne', { turns: 3 })).toBe(true);
    expect(m('cost.turns', 'ne', 3)).toBe(false);
  });

  it('gt / gte / lt / lte compare numbers (or strings) and are false on null', () => {
    expect(m('cost.turns', 'gt', 2)).toBe(true);
    expect(m('cost.turns', 'gt', 3)).toBe(false);
    expect(m('cost.turns', 'gte', 3)).toBe(true);
    expect(m('cost.spend', 'lt', 0.5)).toBe(true);
    expect(m('cost.spend', 'lte', 0.25)).toBe(true);
    expect(m('cost.spend', 'lte', 0.2)).toBe(false);
    expect(m('directive', 'gt', 'a')).toBe(true);
    for (const op of ['gt', 'gte', 'lt', 'lte']) {
      expect(m('cost.missing', op, 0)).toBe(false);
      expect(m('cost.turns', op, null)).toBe(false);
      expect(m('cost.turns', op, '3')).toBe(false);
    }
  });

  it('in checks membership of a list (or a substring of a string value)', () => {
    expect(m('classification.category', 'in', ['transient', 'rate_limited'])).toBe(true);
    expect(m('classification.category', 'in', ['permanent'])).toBe(false);
    expect(m('cost.turns', 'in', [1, 2, 3])).toBe(true);
    expect(m('classification.category', 'in', 'transient,rate_limited')).toBe(true);
    expect(m('cost.missing', 'in', ['x'])).toBe(false);
    expect(m('cost.missing', 'in', [null])).toBe(true);
  });

  it('contains is a substring of the value as text', () => {
    expect(m('directive', 'contains', 'api')).toBe(true);
    expect(m('directive', 'contains', 'web')).toBe(false);
    expect(m('cost.turns', 'contains', '3')).toBe(true);
    expect(m('tags', 'contains', '"b"')).toBe(true);
    expect(m('cost.missing', 'contains', 'null')).toBe(false);
  });

  it('regex searches anywhere in the text', () => {
    expect(m('error.message', 'regex', 'connect(ion)? error')).toBe(true);
    expect(m('error.message', 'regex', '^connect')).toBe(false);
    expect(m('error.message', 'regex', '(?i)UPSTREAM')).toBe(true);
    expect(m('cost.turns', 'regex', '^\\d+$')).toBe(true);
    expect(m('cost.missing', 'regex', '.*')).toBe(false);
    expect(m('directive', 'regex', 42)).toBe(false);
  });

  it('exists is true for any non-null value, including false and 0', () => {
    expect(m('flag', 'exists')).toBe(true);
    expect(m('zero', 'exists')).toBe(true);
    expect(m('error.code', 'exists')).toBe(false);
    expect(m('nope', 'exists')).toBe(false);
  });

  it('an unknown operator is false', () => {
    expect(m('cost.turns', 'approximately', 3)).toBe(false);
    expect(m('cost.turns', 'startswith', 3)).toBe(false);
  });
});

describe('regex safety', () => {
  it('a catastrophic-backtracking pattern from a hostile hooks.yaml finishes at once', () => {
    const hostile = { path: 'text', op: 'regex', value: '^(a+)+$' };
    const input = { text: `${'a'.repeat(50_000)}!` };
    // CPU time, which other processes' load does not add to; backtracking would take years.
    const before = process.cpuUsage();
    expect(matches(hostile, input)).toBe(false);
    expect(matches({ path: 'text', op: 'regex', value: '(a|aa)*b' }, input)).toBe(false);
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(2_000);
  });

  it('patterns RE2 cannot run (backreferences, lookaround) and invalid ones never match', () => {
    expect(regexSearch('(a)\\1', 'aa')).toBe(false);
    expect(regexSearch('(?<=a)b', 'ab')).toBe(false);
    expect(regexSearch('([', 'x')).toBe(false);
    expect(regexSearch('x'.repeat(5_000), 'x'.repeat(5_000))).toBe(false);
  });
});
