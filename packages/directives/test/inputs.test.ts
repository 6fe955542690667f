import { describe, expect, it } from 'vitest';
import type { DirectiveInput } from '../src/index.js';
import { InputError, interpolate, interpolateActions, validateInputs } from '../src/index.js';

const declared: DirectiveInput[] = [
  { name: 'since', type: 'string', required: true },
  { name: 'style', type: 'string', required: false, default: 'bullets' },
  { name: 'audience', type: 'string', required: false },
];

describe('validateInputs', () => {
  it('checks each input against its declared type (issue 11, item 10)', () => {
    const typed: DirectiveInput[] = [
      { name: 'title', type: 'string', required: false },
      { name: 'count', type: 'integer', required: false, default: '3' },
      { name: 'ratio', type: 'number', required: false },
      { name: 'draft', type: 'boolean', required: false },
      { name: 'meta', type: 'object', required: false },
      { name: 'tags', type: 'array', required: false },
      { name: 'where', type: 'path', required: false },
    ];
    // Numbers and booleans may come as text (defaults are text) and are converted.
    expect(validateInputs(typed, { title: 'x', ratio: '0.5', draft: 'true', tags: ['a'], where: 7 })).toEqual(
      {
        title: 'x',
        count: 3,
        ratio: 0.5,
        draft: true,
        tags: ['a'],
        where: 7,
      },
    );
    expect(validateInputs(typed, { title: null })).toMatchObject({ title: null });
    try {
      validateInputs(typed, { title: 5, count: 1.5, draft: 'yes', meta: [], tags: 'a' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      expect((error as Error).message).toBe(
        'Invalid inputs: title must be a string, got 5; count must be an integer, got 1.5; draft must be a boolean (true or false), got "yes"; meta must be an object, got []; tags must be an array, got "a"',
      );
    }
  });

  it('applies declared defaults for absent keys only', () => {
    expect(validateInputs(declared, { since: 'v1' })).toEqual({ since: 'v1', style: 'bullets' });
    expect(validateInputs(declared, { since: 'v1', style: 'prose' })).toEqual({
      since: 'v1',
      style: 'prose',
    });
  });

  it('lists missing required inputs and carries the declared inputs', () => {
    try {
      validateInputs([...declared, { name: 'repo', type: 'string', required: true }], { style: 'x' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      expect((error as Error).message).toBe('Missing required inputs: since, repo');
      expect((error as InputError).declaredInputs.map((i) => i.name)).toEqual([
        'since',
        'style',
        'audience',
        'repo',
      ]);
    }
  });

  it('a null value counts as present', () => {
    expect(validateInputs(declared, { since: null })).toEqual({ since: null, style: 'bullets' });
  });

  it('rejects unknown keys in request order, listing inputs in declaration order', () => {
    expect(() => validateInputs(declared, { zeta: 1, since: 'a', alpha: 2 })).toThrow(
      'Unknown parameters: zeta, alpha. Valid inputs: since, style, audience',
    );
  });

  it('rejects parameters a directive without inputs does not declare, as a tool does', () => {
    expect(() => validateInputs([], { anything: 1 })).toThrow(
      'Unknown parameters: anything. This directive declares no inputs',
    );
    expect(validateInputs([], {})).toEqual({});
    expect(validateInputs([], { model: 'm', limit_overrides: { turns: 1 } })).toEqual({});
  });

  it('model and limit_overrides inside parameters are execute options unless declared', () => {
    expect(validateInputs(declared, { since: 'a', model: 'm', limit_overrides: { turns: 1 } })).toEqual({
      since: 'a',
      style: 'bullets',
    });
    const withModel = [...declared, { name: 'model', type: 'string', required: false }];
    expect(validateInputs(withModel, { since: 'a', model: 'm' })).toMatchObject({ model: 'm' });
  });
});

describe('interpolate', () => {
  const inputs = {
    name: 'Ada',
    empty: '',
    count: 3,
    flag: false,
    obj: { a: 1 },
    nil: null,
    braces: '{input:name}',
  };
  const env = { HOME: '/home/ada' };
  const run = (text: string) => interpolate(text, inputs, { env });

  it('{input:k}: present → value (even empty); missing → left verbatim', () => {
    expect(run('hi {input:name}!')).toBe('hi Ada!');
    expect(run('[{input:empty}]')).toBe('[]');
    expect(run('{input:missing}')).toBe('{input:missing}');
  });

  it('{input:k?}: missing → empty', () => {
    expect(run('a{input:missing?}b')).toBe('ab');
    expect(run('{input:name?}')).toBe('Ada');
  });

  it('{input:k:default} and {input:k|default}: default only when missing; defaults may hold : and |', () => {
    expect(run('{input:missing:fallback}')).toBe('fallback');
    expect(run('{input:missing|fallback}')).toBe('fallback');
    expect(run('{input:name:fallback}')).toBe('Ada');
    expect(run('{input:empty|fallback}')).toBe('');
    expect(run('{input:missing:http://x:8080|y}')).toBe('http://x:8080|y');
    expect(run('{input:missing|a:b|c}')).toBe('a:b|c');
    expect(run('[{input:missing:}]')).toBe('[]');
  });

  it('non-strings render as JSON', () => {
    expect(run('{input:count} {input:flag} {input:obj} {input:nil}')).toBe('3 false {"a":1} null');
  });

  it('repeated keys all substitute', () => {
    expect(run('{input:name}/{input:name}/{input:name?}')).toBe('Ada/Ada/Ada');
  });

  it('never re-interpolates a substituted value', () => {
    expect(run('{input:braces}')).toBe('{input:name}');
    expect(interpolate('{env:TRICK}', {}, { env: { TRICK: '{input:name}' } })).toBe('{input:name}');
  });

  it('values containing braces pass through', () => {
    expect(interpolate('x={input:v}', { v: 'a}b{c' })).toBe('x=a}b{c');
  });

  it('keys with - or . never match; {input:k?x} does not match', () => {
    expect(run('{input:my-key} {input:a.b} {input:name?x}')).toBe(
      '{input:my-key} {input:a.b} {input:name?x}',
    );
  });

  it('${inputs.k} and {env:VAR} / {env:VAR:default}', () => {
    expect(run('${inputs.name} ${inputs.missing}')).toBe('Ada ${inputs.missing}');
    expect(run('{env:HOME} {env:NOPE} {env:NOPE:dflt}')).toBe('/home/ada {env:NOPE} dflt');
  });

  it('actions get input refs only', () => {
    const actions = interpolateActions(
      [{ primary: 'execute', item_id: 'tool:{input:name}', params: { p: '{input:count} {env:HOME}' } }],
      inputs,
    );
    expect(actions).toEqual([{ primary: 'execute', item_id: 'tool:Ada', params: { p: '3 {env:HOME}' } }]);
  });
});
