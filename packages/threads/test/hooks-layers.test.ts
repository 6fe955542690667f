import { parseDirective } from '@ryeos/directives';
import { describe, expect, it } from 'vitest';
import {
  buildHookList,
  buildResolveExtendsHooks,
  isActionSuppressed,
  normalizeHook,
  normalizeHooks,
} from '../src/hooks/layers.js';

const act = (item_id: string) => ({ primary: 'execute', item_type: 'tool', item_id, params: {} });
const hook = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  event: 'after_step',
  action: act(`x/${id}`),
  ...extra,
});

function directiveWith(hooksXml: string) {
  const text = [
    '```xml',
    '<directive name="deploy" version="1.0.0">',
    '  <metadata>',
    '    <description>Deploy</description>',
    `    <hooks>${hooksXml}</hooks>`,
    '  </metadata>',
    '</directive>',
    '```',
    'Deploy it.',
    '',
  ].join('\n');
  return parseDirective(text, '/p/.ai/directives/deploy.md');
}

describe('buildHookList', () => {
  it('orders user, directive, builtin, context, project, infra by layer', () => {
    const list = buildHookList({
      project: { source: 'project hooks.yaml', hooks: { hooks: [hook('project1')] } },
      hookConditions: {
        source: 'hook_conditions.yaml',
        config: {
          infra_hooks: [hook('infra1')],
          context_hooks: [hook('ctx1', { event: 'thread_started' })],
          builtin_hooks: [hook('builtin1'), hook('builtin2')],
        },
      },
      directive: { source: 'directive deploy', hooks: [hook('dir1')] as never },
      user: { source: 'user hooks.yaml', hooks: [hook('user1')] },
    });
    expect(list.map((h) => [h.id, h.layer])).toEqual([
      ['user1', 0],
      ['dir1', 1],
      ['builtin1', 2],
      ['builtin2', 2],
      ['ctx1', 2],
      ['project1', 3],
      ['infra1', 4],
    ]);
  });

  it('an explicit layer wins, and the sort is stable', () => {
    const list = buildHookList({
      user: { source: 'user', hooks: [hook('late-user', { layer: 3 }), hook('u2')] },
      project: { source: 'project', hooks: [hook('early-project', { layer: '0' }), hook('p2')] },
      hookConditions: { source: 'hc', config: { infra_hooks: [hook('pinned-infra', { layer: 3 })] } },
    });
    expect(list.map((h) => h.id)).toEqual(['u2', 'early-project', 'late-user', 'p2', 'pinned-infra']);
    expect(list.find((h) => h.id === 'pinned-infra')!.layer).toBe(3);
  });

  it('takes directive <hooks> as parsed from XML, coercing wrap and layer', () => {
    const directive = directiveWith(
      [
        '<hook id="inject" event="thread_started" position="after" wrap="false" layer="3">',
        '  <condition path="inputs.env" op="eq" value="prod"/>',
        '  <action primary="execute" item_type="knowledge" item_id="project/prod-notes"/>',
        '</hook>',
        '<hook id="multi" event="after_step">',
        '  <action><execute item_type="tool" item_id="a/one"><param name="k">v</param></execute>',
        '  <search query="deploy" scope="knowledge"/></action>',
        '</hook>',
      ].join(''),
    );
    const list = buildHookList({ directive: { source: 'directive deploy', hooks: directive.hooks } });
    const [multi, inject] = list;
    expect(inject).toMatchObject({
      id: 'inject',
      event: 'thread_started',
      layer: 3,
      position: 'after',
      wrap: false,
      condition: { path: 'inputs.env', op: 'eq', value: 'prod' },
      actions: [{ primary: 'execute', item_type: 'knowledge', item_id: 'project/prod-notes', params: {} }],
    });
    expect(multi!.layer).toBe(1);
    expect(multi!.wrap).toBe(true);
    expect(multi!.actions).toEqual([
      { primary: 'execute', item_type: 'tool', item_id: 'a/one', params: { k: 'v' } },
      { primary: 'search', params: { query: 'deploy', scope: 'knowledge' } },
    ]);
  });

  it('coerces string wrap values [BUG upstream: "false" was truthy]', () => {
    for (const [value, expected] of [
      ['false', false],
      ['False', false],
      ['no', false],
      ['0', false],
      [false, false],
      ['true', true],
      [true, true],
      [undefined, true],
    ] as const) {
      const h = normalizeHook(
        { id: 'h', event: 'thread_started', wrap: value, action: act('k/x') },
        'test',
        0,
      );
      expect(h.wrap, String(value)).toBe(expected);
    }
    expect(() =>
      normalizeHook({ id: 'h', event: 'thread_started', wrap: 'maybe', action: act('k') }, 'test', 0),
    ).toThrow(/wrap must be true or false/);
  });

  it('YAML hooks take action or actions, and context hooks default to position before', () => {
    const [a, b] = normalizeHooks(
      {
        hooks: [
          { id: 'a', event: 'thread_started', action: act('k/one') },
          { id: 'b', event: 'error', actions: [act('t/one'), act('t/two')], condition: { any: [] } },
        ],
      },
      'hooks.yaml',
      3,
    );
    expect(a).toMatchObject({ position: 'before', wrap: true, layer: 3, source: 'hooks.yaml' });
    expect(b!.position).toBeUndefined();
    expect(b!.actions.map((x) => x.item_id)).toEqual(['t/one', 't/two']);
    expect(b!.condition).toEqual({ any: [] });
  });
});

describe('validation', () => {
  it('an unknown event names the file and the hook', () => {
    expect(() =>
      normalizeHooks(
        { hooks: [{ id: 'typo', event: 'after_turn', action: act('x') }] },
        '/p/.ai/config/agent/hooks.yaml',
        3,
      ),
    ).toThrow('Invalid hook \'typo\' in /p/.ai/config/agent/hooks.yaml: unknown event "after_turn"');
    try {
      normalizeHook({ id: 'typo', event: 'after_turn', action: act('x') }, 'f.yaml', 0);
    } catch (error) {
      expect((error as { code: string }).code).toBe('CONFIG');
      expect((error as { hint: string }).hint).toContain('after_step');
    }
  });

  it('a hook without actions is an error', () => {
    expect(() => normalizeHook({ id: 'empty', event: 'error' }, 'f.yaml', 0)).toThrow(
      "Invalid hook 'empty' in f.yaml: it has no action",
    );
    expect(() => normalizeHook({ id: 'empty', event: 'error', actions: [] }, 'f.yaml', 0)).toThrow(
      /no action/,
    );
  });

  it('a hook without an id is named by its source and index', () => {
    expect(() => normalizeHooks([hook('ok'), { event: 'nope', action: act('x') }], 'directive d', 1)).toThrow(
      "Invalid hook 'directive d#1'",
    );
  });

  it('rejects bad primaries, params, positions, layers and missing item ids', () => {
    const bad = (extra: Record<string, unknown>, message: RegExp) =>
      expect(() =>
        normalizeHook({ id: 'h', event: 'thread_started', action: act('k'), ...extra }, 'f', 0),
      ).toThrow(message);
    bad({ action: { primary: 'run', item_id: 'x' } }, /unknown action primary "run"/);
    bad({ action: { primary: 'execute', item_id: 'x', params: [1] } }, /params must be a mapping/);
    bad({ action: { primary: 'load' } }, /a 'load' action needs an item_id/);
    bad({ position: 'middle' }, /position must be before or after/);
    bad({ layer: 'high' }, /layer must be an integer/);
    bad({ condition: 'x' }, /condition must be a mapping/);
    expect(() => normalizeHooks({ hooks: { a: 1 } }, 'f', 0)).toThrow(/expected a list of hooks/);
  });
});

describe('resolve_extends hooks', () => {
  it('come from project, user, builtin in that order, unsorted, without directive hooks', () => {
    const ext = (id: string, layer?: number) => ({
      id,
      event: 'resolve_extends',
      ...(layer === undefined ? {} : { layer }),
      action: { set_extends: `ctx/${id}` },
    });
    const list = buildResolveExtendsHooks({
      user: { source: 'user', hooks: [ext('u')] },
      project: { source: 'project', hooks: [ext('p', 9), hook('other')] },
      hookConditions: { source: 'hc', config: { builtin_hooks: [ext('b', 0)], infra_hooks: [ext('i')] } },
    });
    expect(list.map((h) => h.id)).toEqual(['p', 'u', 'b']);
    expect(list[0]!.actions[0]).toEqual({ primary: 'execute', params: {}, set_extends: 'ctx/p' });
  });
});

describe('suppression', () => {
  it('matches the full item id, with or without a kind prefix, never the basename', () => {
    const action = { primary: 'execute' as const, item_id: 'agent/core/Behavior', params: {} };
    expect(isActionSuppressed(action, ['agent/core/Behavior'])).toBe(true);
    expect(isActionSuppressed(action, ['knowledge:agent/core/Behavior'])).toBe(true);
    expect(isActionSuppressed(action, ['Behavior'])).toBe(false);
    expect(isActionSuppressed(action, ['core/Behavior'])).toBe(false);
    expect(isActionSuppressed({ primary: 'search', params: {} }, ['Behavior'])).toBe(false);
  });
});
