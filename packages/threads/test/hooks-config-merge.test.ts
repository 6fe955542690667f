import { describe, expect, it } from 'vitest';
import { mergeAgentConfig } from '../src/hooks/config-merge.js';

describe('mergeAgentConfig', () => {
  it('deep-merges mappings, later layers winning', () => {
    const system = { limits: { defaults: { turns: 25, spend: 1.0 } }, provider: { default: null } };
    const user = { limits: { defaults: { spend: 2.5 } } };
    const project = { limits: { defaults: { turns: 8 } }, provider: { default: 'anthropic' } };
    expect(mergeAgentConfig([system, user, project])).toEqual({
      limits: { defaults: { turns: 8, spend: 2.5 } },
      provider: { default: 'anthropic' },
    });
  });

  it('merges lists of mappings with ids by id: replace in place, append new', () => {
    const system = {
      builtin_hooks: [
        { id: 'a', event: 'error', action: { item_id: 'x' } },
        { id: 'b', event: 'limit', action: { item_id: 'y' } },
      ],
    };
    const project = {
      builtin_hooks: [
        { id: 'b', event: 'limit', action: { item_id: 'override' } },
        { id: 'c', event: 'after_step', action: { item_id: 'z' } },
      ],
    };
    const merged = mergeAgentConfig([system, project]);
    expect(merged.builtin_hooks).toEqual([
      { id: 'a', event: 'error', action: { item_id: 'x' } },
      { id: 'b', event: 'limit', action: { item_id: 'override' } },
      { id: 'c', event: 'after_step', action: { item_id: 'z' } },
    ]);
  });

  it('a replaced item is replaced whole, not deep-merged', () => {
    const merged = mergeAgentConfig([
      { patterns: [{ id: 'p', category: 'transient', retry_policy: { type: 'fixed', delay: 5 } }] },
      { patterns: [{ id: 'p', category: 'permanent' }] },
    ]);
    expect(merged.patterns).toEqual([{ id: 'p', category: 'permanent' }]);
  });

  it('other lists and scalars replace', () => {
    const merged = mergeAgentConfig([
      { tags: ['a', 'b'], values: [{ name: 'x' }], n: 1, nested: { list: [1, 2, 3] } },
      { tags: ['c'], values: [{ name: 'y' }], n: 'two', nested: { list: [] } },
    ]);
    expect(merged).toEqual({ tags: ['c'], values: [{ name: 'y' }], n: 'two', nested: { list: [] } });
  });

  it('a mapping replaces a scalar and the other way round', () => {
    expect(
      mergeAgentConfig([
        { a: 1, b: { c: 1 } },
        { a: { x: 1 }, b: null },
      ]),
    ).toEqual({ a: { x: 1 }, b: null });
  });

  it('ignores the extends key and layers that are not mappings', () => {
    expect(
      mergeAgentConfig([{ extends: 'base', a: 1 }, null, 'text', [1], { extends: 'other', b: 2 }]),
    ).toEqual({
      a: 1,
      b: 2,
    });
  });

  it('never modifies its inputs, and shares no objects with them', () => {
    const system = { hooks: [{ id: 'a', params: { x: 1 } }], deep: { list: [1] } };
    const project = { hooks: [{ id: 'b' }], deep: { more: true } };
    const before = JSON.stringify([system, project]);
    const merged = mergeAgentConfig([system, project]) as {
      hooks: { params?: { x: number } }[];
      deep: { list: number[] };
    };
    expect(JSON.stringify([system, project])).toBe(before);
    merged.hooks[0]!.params!.x = 99;
    merged.deep.list.push(2);
    expect(system.hooks[0]!.params.x).toBe(1);
    expect(system.deep.list).toEqual([1]);
  });

  it('a __proto__ key stays data', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"x": 1}}}');
    const merged = mergeAgentConfig([{ a: { y: 2 } }, hostile]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
  });
});
