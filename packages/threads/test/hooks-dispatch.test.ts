import { RyeError } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import {
  CONTROL_TOOL_ID,
  controlToolResult,
  EMITTER_TOOL_ID,
  emitterEvent,
  type HookDispatch,
  resolveExtendsHook,
  resultContent,
  runContextHooks,
  runControlHooks,
} from '../src/hooks/dispatch.js';
import {
  bareItemId,
  buildHookList,
  type Hook,
  type HookAction,
  normalizeHook,
  normalizeHooks,
} from '../src/hooks/layers.js';

const control = (params: Record<string, unknown>) => ({
  primary: 'execute',
  item_type: 'tool',
  item_id: CONTROL_TOOL_ID,
  params,
});
const emit = (event_type: string, payload: Record<string, unknown> = {}) => ({
  primary: 'execute',
  item_type: 'tool',
  item_id: EMITTER_TOOL_ID,
  params: { event_type, payload },
});
const knowledge = (item_id: string) => ({ primary: 'execute', item_type: 'knowledge', item_id });

/** A dispatcher like the runner's: internal tools in-process, everything else from a table. */
function recorder(items: Record<string, unknown> = {}) {
  const calls: { hook: string; action: HookAction }[] = [];
  const emitted: unknown[] = [];
  const dispatch: HookDispatch = async (action, hook) => {
    calls.push({ hook: hook.id, action });
    if (action.item_id === CONTROL_TOOL_ID) return controlToolResult(action.params);
    if (action.item_id === EMITTER_TOOL_ID) {
      emitted.push(emitterEvent(action.params));
      return { success: true };
    }
    // the facade accepts canonical refs: look them up without the kind prefix
    const found = items[bareItemId(action.item_id ?? '')];
    if (found instanceof Error) throw found;
    if (found === undefined) {
      return { status: 'error', error: `Item not found: ${action.item_id}`, error_type: 'not_found' };
    }
    return found;
  };
  return { dispatch, calls, emitted };
}

const knowledgeEnvelope = (name: string, body: string) => ({
  status: 'success',
  type: 'knowledge',
  data: { name, title: name, body, raw: `---\nname: ${name}\n---\n${body}` },
});

describe('controlToolResult', () => {
  it('maps every action exactly', () => {
    expect(controlToolResult({ action: 'retry' })).toEqual({ action: 'retry' });
    expect(controlToolResult({ action: 'fail', error: 'boom' })).toEqual({ success: false, error: 'boom' });
    expect(controlToolResult({ action: 'fail' })).toEqual({
      success: false,
      error: 'Hook triggered failure',
    });
    expect(controlToolResult({ action: 'fail', error: null })).toEqual({
      success: false,
      error: 'Hook triggered failure',
    });
    expect(controlToolResult({ action: 'abort' })).toEqual({
      success: false,
      aborted: true,
      error: 'Aborted by hook',
    });
    expect(controlToolResult({ action: 'suspend', suspend_reason: 'waiting for approval' })).toEqual({
      success: false,
      suspended: true,
      error: 'waiting for approval',
    });
    expect(controlToolResult({ action: 'escalate', limit_type: 'turns_exceeded', current_value: 3 })).toEqual(
      {
        success: false,
        suspended: true,
        escalated: true,
        error: 'Escalation requested',
        escalation: { limit_type: 'turns_exceeded', current_value: 3 },
      },
    );
  });

  it('continue and skip are null, never an object such as {stdout:"{}"} [BUG upstream]', () => {
    expect(controlToolResult({ action: 'continue' })).toBeNull();
    expect(controlToolResult({ action: 'skip' })).toBeNull();
    expect(controlToolResult({})).toBeNull();
  });

  it('an unknown action is a validation error', () => {
    expect(() => controlToolResult({ action: 'explode' })).toThrow(/Unknown control action "explode"/);
  });
});

describe('runControlHooks', () => {
  const context = {
    error: { message: 'Overloaded', type: 'ProviderCallError' },
    classification: { category: 'transient', retryable: true },
    thread_id: 't/1',
    cost: { turns: 2 },
  };

  it('runs every matching hook and returns the first control result', async () => {
    const hooks = buildHookList({
      user: {
        source: 'user',
        hooks: [
          { id: 'note', event: 'error', action: emit('error_seen', { msg: '${error.message}' }) },
          { id: 'skip', event: 'error', action: control({ action: 'skip' }) },
          { id: 'other-event', event: 'limit', action: control({ action: 'abort' }) },
          {
            id: 'not-matching',
            event: 'error',
            condition: { path: 'classification.category', value: 'permanent' },
            action: control({ action: 'abort' }),
          },
        ],
      },
      hookConditions: {
        source: 'hc',
        config: {
          builtin_hooks: [
            { id: 'retry', event: 'error', action: control({ action: 'retry' }) },
            {
              id: 'fail-too',
              event: 'error',
              action: control({ action: 'fail', error: '${error.message}' }),
            },
          ],
        },
      },
    });
    const r = recorder();
    const result = await runControlHooks('error', context, hooks, { dispatch: r.dispatch });
    expect(result).toEqual({ action: 'retry' });
    expect(r.calls.map((c) => c.hook)).toEqual(['note', 'skip', 'retry', 'fail-too']);
    expect(r.emitted).toEqual([{ event_type: 'error_seen', payload: { msg: 'Overloaded' } }]);
    expect(r.calls[3]!.action.params).toEqual({ action: 'fail', error: 'Overloaded' });
  });

  it('ignores control results of layer 4 (infra) but still runs them', async () => {
    const hooks = buildHookList({
      hookConditions: {
        source: 'hc',
        config: {
          infra_hooks: [{ id: 'infra', event: 'error', action: control({ action: 'abort' }) }],
        },
      },
      project: {
        source: 'project',
        hooks: [{ id: 'proj', event: 'error', action: control({ action: 'fail' }) }],
      },
    });
    const r = recorder();
    expect(await runControlHooks('error', context, hooks, { dispatch: r.dispatch })).toEqual({
      success: false,
      error: 'Hook triggered failure',
    });
    // project hooks (layer 3) do steer the thread [DIV: upstream muted layer 3]
    const infraOnly = hooks.filter((h) => h.layer === 4);
    expect(await runControlHooks('error', context, infraOnly, { dispatch: r.dispatch })).toBeNull();
    expect(r.calls.map((c) => c.hook)).toEqual(['proj', 'infra', 'infra']);
  });

  it('a success envelope stands for its data; {success:true} and null are no decision', async () => {
    const hooks = normalizeHooks(
      [
        { id: 'a', event: 'limit', action: { primary: 'execute', item_id: 'x/ok' } },
        { id: 'b', event: 'limit', action: { primary: 'execute', item_id: 'x/wrapped-ok' } },
        { id: 'c', event: 'limit', action: { primary: 'execute', item_id: 'x/decides' } },
      ],
      'test',
      0,
    );
    const r = recorder({
      'x/ok': { success: true },
      'x/wrapped-ok': { status: 'success', data: { success: true } },
      'x/decides': { status: 'success', data: { success: false, error: 'stop here' } },
    });
    expect(await runControlHooks('limit', {}, hooks, { dispatch: r.dispatch })).toEqual({
      success: false,
      error: 'stop here',
    });
  });

  it('returns null when no hook decides', async () => {
    const hooks = [
      normalizeHook({ id: 'x', event: 'error', action: control({ action: 'continue' }) }, 't', 0),
    ];
    expect(await runControlHooks('error', context, hooks, { dispatch: recorder().dispatch })).toBeNull();
    expect(await runControlHooks('error', context, [], { dispatch: recorder().dispatch })).toBeNull();
  });

  it('after_step, directive_return and after_complete swallow errors and never decide', async () => {
    for (const event of ['after_step', 'directive_return', 'after_complete'] as const) {
      const hooks = normalizeHooks(
        [
          { id: 'boom', event, action: { primary: 'execute', item_id: 'x/throws' } },
          { id: 'abort', event, action: control({ action: 'abort' }) },
          { id: 'emit', event, action: emit('after', { turn: '${cost.turns}' }) },
        ],
        'test',
        0,
      );
      const r = recorder({ 'x/throws': new Error('tool crashed') });
      const warnings: string[] = [];
      const result = await runControlHooks(event, context, hooks, {
        dispatch: r.dispatch,
        onWarning: (m) => warnings.push(m),
      });
      expect(result).toBeNull();
      expect(warnings).toEqual([`Hook 'boom' (${event}) failed: tool crashed`]);
      expect(r.emitted).toEqual([{ event_type: 'after', payload: { turn: 2 } }]);
    }
  });

  it('for error and limit events a throwing dispatch propagates', async () => {
    const hooks = [normalizeHook({ id: 'boom', event: 'error', action: { item_id: 'x/throws' } }, 't', 0)];
    const r = recorder({ 'x/throws': new Error('tool crashed') });
    await expect(runControlHooks('error', context, hooks, { dispatch: r.dispatch })).rejects.toThrow(
      'tool crashed',
    );
  });
});

describe('runContextHooks', () => {
  const context = { directive: 'deploy', inputs: { env: 'prod' }, project: 'acme' };
  const items = {
    'rye/agent/core/Environment': knowledgeEnvelope('Environment', 'Project ${project}, env {input:env}.'),
    'rye/agent/core/DirectiveInstruction': knowledgeEnvelope(
      'DirectiveInstruction',
      'Execute the directive now.',
    ),
    'project/notes': { status: 'success', data: { body: 'Notes body' } },
    'project/raw-only': { status: 'success', data: { raw: 'raw text' } },
    'project/top-level': { status: 'success', content: 'top-level content' },
  };

  it('wraps by default, injects raw with wrap false, and sorts text into before/after', async () => {
    const hooks = buildHookList({
      hookConditions: {
        source: 'hc',
        config: {
          context_hooks: [
            { id: 'env', event: 'thread_started', action: knowledge('rye/agent/core/Environment') },
            {
              id: 'instr',
              event: 'thread_started',
              position: 'after',
              wrap: false,
              action: knowledge('rye/agent/core/DirectiveInstruction'),
            },
            { id: 'sys', event: 'build_system_prompt', action: knowledge('project/notes') },
          ],
        },
      },
      project: {
        source: 'project',
        hooks: [
          {
            id: 'notes',
            event: 'thread_started',
            condition: { path: 'inputs.env', value: 'prod' },
            actions: [knowledge('project/notes'), knowledge('knowledge:project/raw-only')],
          },
          {
            id: 'never',
            event: 'thread_started',
            condition: { path: 'inputs.env', value: 'dev' },
            action: knowledge('project/notes'),
          },
        ],
      },
    });
    const r = recorder(items);
    const injected = await runContextHooks('thread_started', context, hooks, [], { dispatch: r.dispatch });
    expect(injected.before).toBe(
      [
        '<Environment id="rye/agent/core/Environment" type="knowledge">\nProject acme, env prod.\n</Environment>',
        '<notes id="project/notes" type="knowledge">\nNotes body\n</notes>',
        '<raw-only id="project/raw-only" type="knowledge">\nraw text\n</raw-only>',
      ].join('\n\n'),
    );
    expect(injected.after).toBe('Execute the directive now.');
    expect(injected.blocks).toEqual([
      {
        id: 'rye/agent/core/Environment',
        content: 'Project acme, env prod.',
        role: 'user',
        position: 'before',
        hook_id: 'env',
      },
      {
        id: 'rye/agent/core/DirectiveInstruction',
        content: 'Execute the directive now.',
        role: 'user',
        position: 'after',
        hook_id: 'instr',
      },
      { id: 'project/notes', content: 'Notes body', role: 'user', position: 'before', hook_id: 'notes' },
      { id: 'project/raw-only', content: 'raw text', role: 'user', position: 'before', hook_id: 'notes' },
    ]);
    const system = await runContextHooks('build_system_prompt', context, hooks, [], { dispatch: r.dispatch });
    expect(system.blocks.map((b) => [b.id, b.role])).toEqual([['project/notes', 'system']]);
  });

  it('suppresses by hook id or by full item id, never by basename', async () => {
    const hooks = normalizeHooks(
      [
        { id: 'env', event: 'thread_started', action: knowledge('rye/agent/core/Environment') },
        { id: 'instr', event: 'thread_started', action: knowledge('rye/agent/core/DirectiveInstruction') },
        { id: 'notes', event: 'thread_started', action: knowledge('project/notes') },
      ],
      'test',
      2,
    );
    const r = recorder(items);
    const run = (suppress: string[]) =>
      runContextHooks('thread_started', context, hooks, suppress, { dispatch: r.dispatch }).then((x) =>
        x.blocks.map((b) => b.hook_id),
      );
    expect(await run([])).toEqual(['env', 'instr', 'notes']);
    expect(await run(['instr'])).toEqual(['env', 'notes']);
    expect(await run(['rye/agent/core/Environment'])).toEqual(['instr', 'notes']);
    expect(await run(['knowledge:project/notes'])).toEqual(['env', 'instr']);
    expect(await run(['Environment', 'DirectiveInstruction', 'notes/'])).toEqual(['env', 'instr', 'notes']);
    // a suppressed hook is not even dispatched
    r.calls.length = 0;
    await run(['env']);
    expect(r.calls.map((c) => c.hook)).toEqual(['instr', 'notes']);
  });

  it('an integrity failure aborts the thread by throwing', async () => {
    const hooks = [
      normalizeHook({ id: 'tampered', event: 'thread_started', action: knowledge('x/bad') }, 't', 0),
    ];
    const r = recorder({
      'x/bad': {
        status: 'error',
        error_type: 'integrity',
        error: 'Content hash mismatch: knowledge x/bad was modified after signing',
        hint: 'Sign knowledge:x/bad in user space.',
        fix: { action: 'sign', refs: ['knowledge:x/bad'], space: 'user' },
      },
    });
    const run = runContextHooks('thread_started', context, hooks, [], { dispatch: r.dispatch });
    await expect(run).rejects.toBeInstanceOf(RyeError);
    await expect(run).rejects.toMatchObject({
      code: 'INTEGRITY',
      message:
        "Context hook 'tampered' could not use 'x/bad': Content hash mismatch: knowledge x/bad was modified after signing",
      hint: 'Sign knowledge:x/bad in user space.',
      fix: { action: 'sign', refs: ['knowledge:x/bad'], space: 'user' },
    });
    const thrown = recorder({ 'x/bad': new RyeError('INTEGRITY', 'unsigned item') });
    await expect(
      runContextHooks('thread_started', context, hooks, [], { dispatch: thrown.dispatch }),
    ).rejects.toMatchObject({
      code: 'INTEGRITY',
      hint: 'Sign knowledge:x/bad again, or remove the hook.',
      fix: { action: 'sign', refs: ['knowledge:x/bad'], space: 'project' },
    });
  });

  it('other failures warn and are skipped', async () => {
    const hooks = normalizeHooks(
      [
        { id: 'missing', event: 'thread_started', action: knowledge('x/missing') },
        { id: 'crash', event: 'thread_started', action: knowledge('x/crash') },
        { id: 'refused', event: 'thread_started', action: knowledge('x/refused') },
        { id: 'empty', event: 'thread_started', action: knowledge('x/empty') },
        { id: 'notes', event: 'thread_started', action: knowledge('project/notes') },
      ],
      't',
      0,
    );
    const r = recorder({
      ...items,
      'x/crash': new Error('disk on fire'),
      'x/refused': { success: false, error: 'no' },
      'x/empty': { status: 'success', data: { body: '   ' } },
    });
    const warnings: string[] = [];
    const injected = await runContextHooks('thread_started', context, hooks, [], {
      dispatch: r.dispatch,
      onWarning: (m) => warnings.push(m),
    });
    expect(injected.blocks.map((b) => b.hook_id)).toEqual(['notes']);
    expect(warnings).toEqual([
      "Context hook 'missing' skipped 'x/missing': Item not found: x/missing",
      "Context hook 'crash' skipped 'x/crash': disk on fire",
      "Context hook 'refused' skipped 'x/refused': no",
    ]);
  });

  it('extracts content in the order data.content, data.body, data.raw, content, body', () => {
    expect(resultContent({ data: { content: 'c', body: 'b', raw: 'r' }, content: 'x' })).toBe('c');
    expect(resultContent({ data: { body: 'b', raw: 'r' }, content: 'x' })).toBe('b');
    expect(resultContent({ data: { raw: 'r' }, content: 'x' })).toBe('r');
    expect(resultContent({ data: {}, content: 'x', body: 'y' })).toBe('x');
    expect(resultContent({ body: 'y' })).toBe('y');
    expect(resultContent({ data: 'plain' })).toBe('plain');
    expect(resultContent(null)).toBe('');
  });

  it('names the tag after the last id segment when the item has no name', async () => {
    const hooks = [
      normalizeHook({ id: 'h', event: 'thread_continued', action: knowledge('a/b/top-level') }, 't', 0),
    ];
    const r = recorder({ 'a/b/top-level': { status: 'success', content: 'hello' } });
    const injected = await runContextHooks('thread_continued', context, hooks, [], { dispatch: r.dispatch });
    expect(injected.before).toBe('<top-level id="a/b/top-level" type="knowledge">\nhello\n</top-level>');
  });
});

describe('resolveExtendsHook', () => {
  const hooks: Hook[] = normalizeHooks(
    [
      {
        id: 'api-context',
        event: 'resolve_extends',
        condition: { path: 'category', op: 'eq', value: 'api' },
        action: { set_extends: 'project/contexts/${category}' },
      },
      { id: 'notify', event: 'resolve_extends', action: knowledge('x/y') },
      { id: 'fallback', event: 'resolve_extends', action: { set_extends: 'project/contexts/default' } },
      { id: 'later', event: 'resolve_extends', action: { set_extends: 'never/used' } },
    ],
    'project',
    3,
  );

  it('returns the first matching hook with set_extends, in the given order', () => {
    expect(resolveExtendsHook({ category: 'api' }, hooks)).toEqual({
      extends: 'project/contexts/api',
      hook_id: 'api-context',
    });
    expect(resolveExtendsHook({ category: 'web' }, hooks)).toEqual({
      extends: 'project/contexts/default',
      hook_id: 'fallback',
    });
  });

  it('is null without a match', () => {
    expect(resolveExtendsHook({}, hooks.slice(0, 2))).toBeNull();
    expect(resolveExtendsHook({ category: 'api' }, [])).toBeNull();
  });
});
