import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKnowledge } from '@ryeos/directives';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { mergeAgentConfig } from '../src/hooks/config-merge.js';
import {
  CONTROL_TOOL_ID,
  controlToolResult,
  EMITTER_TOOL_ID,
  emitterEvent,
  type HookDispatch,
  runContextHooks,
  runControlHooks,
} from '../src/hooks/dispatch.js';
import { classifyProviderError, parseErrorClassification } from '../src/hooks/errors.js';
import { buildHookList, type HookLayerInput } from '../src/hooks/layers.js';

const systemAi = join(import.meta.dirname, '../.ai');
const agentConfig = (name: string) => join(systemAi, 'config/agent', name);
const instructionPath = join(systemAi, 'knowledge/rye/agent/core/DirectiveInstruction.md');

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rye-hooks-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function readYaml(path: string): Promise<unknown> {
  try {
    return parse(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** What the runner will do: hook_conditions.yaml merged system → user → project, hooks.yaml per space. */
async function loadLayers(user: string, project: string): Promise<HookLayerInput> {
  const config = mergeAgentConfig([
    await readYaml(agentConfig('hook_conditions.yaml')),
    await readYaml(join(user, '.ai/config/agent/hook_conditions.yaml')),
    await readYaml(join(project, '.ai/config/agent/hook_conditions.yaml')),
  ]);
  const userHooks = join(user, '.ai/config/agent/hooks.yaml');
  const projectHooks = join(project, '.ai/config/agent/hooks.yaml');
  return {
    user: { source: userHooks, hooks: await readYaml(userHooks) },
    hookConditions: { source: 'hook_conditions.yaml', config },
    project: { source: projectHooks, hooks: await readYaml(projectHooks) },
  };
}

async function writeConfig(space: string, name: string, text: string): Promise<void> {
  await mkdir(join(space, '.ai/config/agent'), { recursive: true });
  await writeFile(join(space, '.ai/config/agent', name), text);
}

/** The runner's dispatcher in miniature: internal tools in-process, knowledge read from disk. */
function inProcess() {
  const emitted: unknown[] = [];
  const dispatched: string[] = [];
  const dispatch: HookDispatch = async (action) => {
    dispatched.push(action.item_id ?? '');
    if (action.item_id === CONTROL_TOOL_ID) return controlToolResult(action.params);
    if (action.item_id === EMITTER_TOOL_ID) {
      emitted.push(emitterEvent(action.params));
      return { success: true };
    }
    if (action.item_type === 'knowledge' && action.item_id === 'rye/agent/core/DirectiveInstruction') {
      const parsed = parseKnowledge(await readFile(instructionPath, 'utf8'), instructionPath, action.item_id);
      return {
        status: 'success',
        type: 'knowledge',
        data: { ...parsed.fields, body: parsed.body, raw: parsed.raw },
      };
    }
    return { status: 'error', error: `Item not found: ${action.item_id}`, error_type: 'not_found' };
  };
  return { dispatch, emitted, dispatched };
}

const errorClassification = async () =>
  parseErrorClassification(
    await readYaml(agentConfig('error_classification.yaml')),
    'error_classification.yaml',
  );

function errorContext(classification: ReturnType<typeof classifyProviderError>, message: string) {
  return {
    error: { type: 'ProviderCallError', message, code: null, http_status: 500 },
    classification,
    thread_id: 'demo/demo-1',
  };
}

describe('the shipped hook_conditions.yaml', () => {
  it('has the builtin, context and infra hooks of the spec, at layers 2 and 4', async () => {
    const hooks = buildHookList(await loadLayers(join(root, 'user'), join(root, 'project')));
    expect(hooks.map((h) => [h.id, h.event, h.layer])).toEqual([
      ['default_retry_transient', 'error', 2],
      ['default_fail_permanent', 'error', 2],
      ['default_abort_cancelled', 'error', 2],
      ['default_escalate_limit', 'limit', 2],
      ['default_context_compaction', 'context_window_pressure', 2],
      ['default_directive_return', 'directive_return', 2],
      ['ctx_directive_instruction', 'thread_started', 2],
      ['infra_save_state', 'after_step', 4],
      ['infra_completion_signal', 'after_complete', 4],
    ]);
    expect(hooks.find((h) => h.id === 'ctx_directive_instruction')).toMatchObject({
      position: 'after',
      wrap: false,
      actions: [
        { primary: 'execute', item_type: 'knowledge', item_id: 'rye/agent/core/DirectiveInstruction' },
      ],
    });
  });

  it('error hooks: retry retryable, fail permanent with the message, abort cancelled', async () => {
    const hooks = buildHookList(await loadLayers(join(root, 'user'), join(root, 'project')));
    const classes = await errorClassification();
    const { dispatch } = inProcess();
    const run = (info: Parameters<typeof classifyProviderError>[1]) =>
      runControlHooks('error', errorContext(classifyProviderError(classes, info), info.message), hooks, {
        dispatch,
      });
    const base = { providerId: 'anthropic', errorClass: 'ProviderCallError', retryable: false };
    expect(await run({ ...base, httpStatus: 429, message: 'rate limited', retryAfterSeconds: 2 })).toEqual({
      action: 'retry',
    });
    expect(await run({ ...base, httpStatus: 529, message: 'Overloaded', code: 'overloaded_error' })).toEqual({
      action: 'retry',
    });
    expect(await run({ ...base, httpStatus: 401, message: 'invalid x-api-key' })).toEqual({
      success: false,
      error: 'invalid x-api-key',
    });
    expect(await run({ ...base, httpStatus: 0, errorClass: 'CancelledError', message: 'aborted' })).toEqual({
      success: false,
      aborted: true,
      error: 'Aborted by hook',
    });
  });

  it('limit hooks escalate each *_exceeded code with its value', async () => {
    const hooks = buildHookList(await loadLayers(join(root, 'user'), join(root, 'project')));
    const { dispatch } = inProcess();
    for (const code of ['turns', 'tokens', 'spend', 'duration_seconds', 'spawns', 'depth']) {
      const result = await runControlHooks(
        'limit',
        { limit_code: `${code}_exceeded`, current_value: 3, current_max: 3 },
        hooks,
        { dispatch },
      );
      expect(result).toEqual({
        success: false,
        suspended: true,
        escalated: true,
        error: 'Escalation requested',
        escalation: { limit_type: `${code}_exceeded`, current_value: 3 },
      });
    }
    expect(await runControlHooks('limit', { limit_code: 'other' }, hooks, { dispatch })).toBeNull();
  });

  it('infra and directive_return hooks emit events and never decide', async () => {
    const hooks = buildHookList(await loadLayers(join(root, 'user'), join(root, 'project')));
    const { dispatch, emitted, dispatched } = inProcess();
    const cost = { turns: 4, input_tokens: 10, output_tokens: 5, spend: 0.01 };
    expect(await runControlHooks('after_step', { cost, thread_id: 't/1' }, hooks, { dispatch })).toBeNull();
    expect(
      await runControlHooks('directive_return', { outputs: { ok: 'yes' }, cost, thread_id: 't/1' }, hooks, {
        dispatch,
      }),
    ).toBeNull();
    expect(
      await runControlHooks(
        'after_complete',
        { thread_id: 't/1', cost, status: 'error', project_path: '/p' },
        hooks,
        {
          dispatch,
        },
      ),
    ).toBeNull();
    expect(emitted).toEqual([
      { event_type: 'checkpoint_saved', thread_id: 't/1', payload: { turn: 4 } },
      { event_type: 'directive_return', thread_id: 't/1', payload: { outputs: { ok: 'yes' }, cost } },
      { event_type: 'thread_finalized', thread_id: 't/1', payload: { status: 'error', cost } },
    ]);
    // the compaction hook names a directive that need not exist: its failure is only a warning
    const warnings: string[] = [];
    expect(
      await runControlHooks('context_window_pressure', { pressure_ratio: 0.85, tokens_used: 170000 }, hooks, {
        dispatch,
        onWarning: (m) => warnings.push(m),
      }),
    ).toBeNull();
    expect(dispatched.at(-1)).toBe('rye/agent/threads/default_compaction');
  });

  it('thread_started injects DirectiveInstruction raw, after the directive', async () => {
    const hooks = buildHookList(await loadLayers(join(root, 'user'), join(root, 'project')));
    const { dispatch } = inProcess();
    const injected = await runContextHooks('thread_started', { directive: 'demo', inputs: {} }, hooks, [], {
      dispatch,
    });
    expect(injected.before).toBe('');
    expect(injected.after.startsWith('Execute the directive above now. Begin with step 1.')).toBe(true);
    expect(injected.after).toContain('Your first output must be tool calls');
    expect(injected.after).not.toContain('<DirectiveInstruction');
    // suppressible by its hook id or its item id
    for (const entry of ['ctx_directive_instruction', 'rye/agent/core/DirectiveInstruction']) {
      expect((await runContextHooks('thread_started', {}, hooks, [entry], { dispatch })).after).toBe('');
    }
  });

  it('a project hook_conditions.yaml replaces a builtin by id; hooks.yaml layers run around it', async () => {
    const user = join(root, 'user');
    const project = join(root, 'project');
    await writeConfig(
      project,
      'hook_conditions.yaml',
      [
        'builtin_hooks:',
        '  - id: default_retry_transient',
        '    event: error',
        '    condition: {path: classification.retryable, op: eq, value: true}',
        '    action:',
        '      primary: execute',
        '      item_id: rye/agent/threads/internal/control',
        '      params: {action: fail, error: "no retries here: ${error.message}"}',
        '',
      ].join('\n'),
    );
    await writeConfig(
      user,
      'hooks.yaml',
      [
        'hooks:',
        '  - id: user_log',
        '    event: error',
        '    action: {item_id: rye/agent/threads/internal/emitter, params: {event_type: seen}}',
        '',
      ].join('\n'),
    );
    await writeConfig(
      project,
      'hooks.yaml',
      [
        'hooks:',
        '  - id: project_suspend',
        '    event: limit',
        '    layer: 1',
        '    action: {item_id: rye/agent/threads/internal/control, params: {action: suspend, suspend_reason: ask}}',
        '',
      ].join('\n'),
    );
    const hooks = buildHookList(await loadLayers(user, project));
    expect(hooks.map((h) => h.id).slice(0, 3)).toEqual([
      'user_log',
      'project_suspend',
      'default_retry_transient',
    ]);
    expect(hooks.filter((h) => h.id === 'default_retry_transient')).toHaveLength(1);
    const classes = await errorClassification();
    const { dispatch, emitted } = inProcess();
    const info = {
      providerId: 'openai',
      errorClass: 'ProviderCallError',
      retryable: true,
      httpStatus: 503,
      message: 'busy',
    };
    expect(
      await runControlHooks('error', errorContext(classifyProviderError(classes, info), 'busy'), hooks, {
        dispatch,
      }),
    ).toEqual({ success: false, error: 'no retries here: busy' });
    expect(emitted).toEqual([{ event_type: 'seen', payload: {} }]);
    // the project's explicit layer 1 puts its limit hook before the builtin escalation
    expect(
      await runControlHooks('limit', { limit_code: 'turns_exceeded', current_value: 1 }, hooks, { dispatch }),
    ).toEqual({ success: false, suspended: true, error: 'ask' });
  });
});

describe('the shipped DirectiveInstruction knowledge', () => {
  it('declares the name and category of its path', async () => {
    const text = await readFile(instructionPath, 'utf8');
    const parsed = parseKnowledge(text, instructionPath, 'rye/agent/core/DirectiveInstruction');
    expect(parsed.name).toBe('DirectiveInstruction');
    expect(parsed.category).toBe('rye/agent/core');
    expect(parsed.body.startsWith('Execute the directive above now. Begin with step 1.')).toBe(true);
  });
});
