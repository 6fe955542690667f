/**
 * Running hooks (spec threads §5.5, §5.6, §5.3 resolve_extends).
 *
 * The runner supplies `dispatch(action, hook)`: it runs an (already interpolated) action through
 * the facade's execute/search/load/sign, and runs the internal tools
 * `rye/agent/threads/internal/control` (`controlToolResult`) and `internal/emitter` in-process,
 * returning their value as is (`null` for continue/skip, `{success:true}` for an emit). A
 * subprocess would turn that `null` into `{stdout:"{}"}` and end the thread [BUG upstream].
 */
import type { Fix } from '@ryeos/lillux';
import { isFix, isRyeError, RyeError } from '@ryeos/lillux';
import { isRecord } from '../records.js';
import { matches } from './conditions.js';
import { interpolateAction, interpolateString, interpolateText } from './interpolate.js';
import type { Hook, HookAction, HookEvent } from './layers.js';
import { bareItemId, isActionSuppressed, isHookSuppressed, LAYER } from './layers.js';

export const CONTROL_TOOL_ID = 'rye/agent/threads/internal/control';
export const EMITTER_TOOL_ID = 'rye/agent/threads/internal/emitter';

export type HookDispatch = (action: HookAction, hook: Hook) => Promise<unknown>;

export interface HookRunOptions {
  dispatch: HookDispatch;
  /** Told about failures that are skipped rather than fatal. */
  onWarning?: (message: string) => void;
}

/** What a control hook decided (the internal control tool's shapes, or a hook's own result). */
export interface ControlResult {
  action?: 'retry';
  success?: boolean;
  error?: string;
  aborted?: boolean;
  suspended?: boolean;
  escalated?: boolean;
  escalation?: { limit_type: unknown; current_value: unknown };
  [key: string]: unknown;
}

/**
 * Events whose control results are ignored and whose hook failures are swallowed: they observe
 * a thread, they do not steer it (`context_window_pressure` too: its builtin hook names a
 * directive that need not exist).
 */
export const ADVISORY_EVENTS: readonly HookEvent[] = [
  'after_step',
  'directive_return',
  'after_complete',
  'context_window_pressure',
];

function hooksFor(event: HookEvent, context: unknown, hooks: readonly Hook[]): Hook[] {
  return hooks.filter((hook) => hook.event === event && matches(hook.condition, context));
}

/**
 * A dispatch result as a control result: a success envelope stands for its `data` (the tool's
 * own return value); `null` and exactly `{success:true}` mean "no decision".
 */
function controlValue(result: unknown): ControlResult | null {
  let value = result;
  if (isRecord(value) && value.status === 'success' && Object.hasOwn(value, 'data')) value = value.data;
  if (!isRecord(value)) return null;
  const keys = Object.keys(value);
  if (keys.length === 1 && value.success === true) return null;
  return value as ControlResult;
}

/**
 * Runs every matching hook of a control event, in list order. The first result that is not
 * null, not exactly `{success:true}` and not from layer 4 is the control result. For the
 * advisory events the result is always null and hook failures only warn.
 */
export async function runControlHooks(
  event: HookEvent,
  context: unknown,
  hooks: readonly Hook[],
  options: HookRunOptions,
): Promise<ControlResult | null> {
  const advisory = ADVISORY_EVENTS.includes(event);
  let decided: ControlResult | null = null;
  for (const hook of hooksFor(event, context, hooks)) {
    for (const action of hook.actions) {
      let result: unknown;
      try {
        result = await options.dispatch(interpolateAction(action, context), hook);
      } catch (error) {
        if (!advisory) throw error;
        options.onWarning?.(`Hook '${hook.id}' (${event}) failed: ${(error as Error).message}`);
        continue;
      }
      if (advisory || decided || hook.layer >= LAYER.infra) continue;
      decided = controlValue(result);
    }
  }
  return decided;
}

/**
 * The internal control tool, run in-process (spec threads §5.5). `continue`/`skip` are `null`
 * (no decision): never an object, so they can never be mistaken for a result.
 */
export function controlToolResult(params: Record<string, unknown>): ControlResult | null {
  const action = params.action ?? 'continue';
  const text = (value: unknown, fallback: string) =>
    typeof value === 'string' && value !== ''
      ? value
      : value == null || value === ''
        ? fallback
        : String(value);
  switch (action) {
    case 'continue':
    case 'skip':
      return null;
    case 'retry':
      return { action: 'retry' };
    case 'fail':
      return { success: false, error: text(params.error, 'Hook triggered failure') };
    case 'abort':
      return { success: false, aborted: true, error: 'Aborted by hook' };
    case 'suspend':
      return { success: false, suspended: true, error: text(params.suspend_reason, 'Suspended by hook') };
    case 'escalate':
      return {
        success: false,
        suspended: true,
        escalated: true,
        error: 'Escalation requested',
        escalation: { limit_type: params.limit_type ?? null, current_value: params.current_value ?? null },
      };
    default:
      throw new RyeError('VALIDATION', `Unknown control action ${JSON.stringify(action)}`, {
        hint: 'Use one of: retry, fail, abort, suspend, escalate, continue, skip.',
        details: { action },
      });
  }
}

/** The emitter tool's parameters, checked: `{event_type, thread_id?, payload}`. */
export function emitterEvent(params: Record<string, unknown>): {
  event_type: string;
  thread_id?: string;
  payload: Record<string, unknown>;
} {
  const { event_type, thread_id, payload } = params;
  if (typeof event_type !== 'string' || event_type === '') {
    throw new RyeError('VALIDATION', 'The emitter tool needs an event_type', {
      hint: 'Give params: {event_type: "name", payload: {…}}.',
    });
  }
  if (payload !== undefined && payload !== null && !isRecord(payload)) {
    throw new RyeError('VALIDATION', `The emitter payload of '${event_type}' must be a mapping`);
  }
  return {
    event_type,
    ...(typeof thread_id === 'string' && thread_id !== '' ? { thread_id } : {}),
    payload: isRecord(payload) ? payload : {},
  };
}

export interface ContextBlock {
  /** The item id the text came from. */
  id: string;
  /** The interpolated text, before wrapping. */
  content: string;
  /** Where the text goes: the system prompt (`build_system_prompt`) or the first user message. */
  role: 'system' | 'user';
  position: 'before' | 'after';
  hook_id: string;
}

export interface ContextInjection {
  /** Blank-line-joined text placed before the directive. */
  before: string;
  after: string;
  /** Every injected piece, for the `context_injected` transcript event. */
  blocks: ContextBlock[];
}

function firstText(...candidates: unknown[]): string {
  for (const c of candidates) {
    if (typeof c === 'string' && c !== '') return c;
    if (c !== undefined && c !== null && typeof c === 'object') return JSON.stringify(c, null, 2);
  }
  return '';
}

/** The text of a dispatch result: `data.content || data.body || data.raw || content || body`. */
export function resultContent(result: unknown): string {
  if (typeof result === 'string') return result;
  if (!isRecord(result)) return '';
  const data = result.data;
  if (typeof data === 'string') return data;
  const d = isRecord(data) ? data : {};
  return firstText(d.content, d.body, d.raw, result.content, result.body);
}

function failureOf(
  result: unknown,
): { message: string; errorType?: unknown; hint?: unknown; fix?: unknown } | null {
  if (!isRecord(result)) return null;
  if (result.status !== 'error' && result.success !== false) return null;
  const message = typeof result.error === 'string' ? result.error : JSON.stringify(result.error ?? 'failed');
  return { message, errorType: result.error_type, hint: result.hint, fix: result.fix };
}

const TAG = /^[A-Za-z_][\w.-]*$/;

/** `<Name id="item/id" type="knowledge">` — Name is the item's metadata name, else its last id segment. */
function wrapContent(content: string, itemId: string, itemType: string | undefined, result: unknown): string {
  const data = isRecord(result) && isRecord(result.data) ? result.data : {};
  const last = itemId.split('/').pop() || itemId;
  const name =
    typeof data.name === 'string' && TAG.test(data.name) ? data.name : TAG.test(last) ? last : 'context';
  return `<${name} id="${itemId}" type="${itemType ?? 'knowledge'}">\n${content}\n</${name}>`;
}

function integrityError(hook: Hook, itemId: string, message: string, hint: unknown, fix: unknown): RyeError {
  // An error that explains itself keeps its own fix, or none (an item that shadows another
  // must not be signed); only a bare failure gets the default.
  const explained = typeof hint === 'string';
  const ownFix = isFix(fix) ? fix : undefined;
  const defaultFix: Fix = { action: 'sign', refs: [`knowledge:${itemId}`], space: 'project' };
  const chosen = explained ? ownFix : (ownFix ?? defaultFix);
  return new RyeError('INTEGRITY', `Context hook '${hook.id}' could not use '${itemId}': ${message}`, {
    hint: explained ? hint : `Sign knowledge:${itemId} again, or remove the hook.`,
    ...(chosen ? { fix: chosen } : {}),
    details: { hook_id: hook.id, item_id: itemId },
  });
}

/**
 * Runs the context hooks of `event` (build_system_prompt, thread_started, thread_continued):
 * every matching hook not suppressed by id, every action not suppressed by item id. A failure
 * of integrity aborts (throws `RyeError('INTEGRITY')`); any other failure warns and is skipped.
 */
export async function runContextHooks(
  event: HookEvent,
  context: unknown,
  hooks: readonly Hook[],
  suppress: readonly string[],
  options: HookRunOptions,
): Promise<ContextInjection> {
  const before: string[] = [];
  const after: string[] = [];
  const blocks: ContextBlock[] = [];
  const role = event === 'build_system_prompt' ? 'system' : 'user';
  for (const hook of hooksFor(event, context, hooks)) {
    if (isHookSuppressed(hook, suppress)) continue;
    for (const raw of hook.actions) {
      const action = interpolateAction(raw, context);
      if (isActionSuppressed(action, suppress)) continue;
      const itemId = bareItemId(action.item_id ?? '');
      let result: unknown;
      try {
        result = await options.dispatch(action, hook);
      } catch (error) {
        if (isRyeError(error) && error.code === 'INTEGRITY') {
          throw integrityError(hook, itemId, error.message, error.hint, error.fix);
        }
        options.onWarning?.(`Context hook '${hook.id}' skipped '${itemId}': ${(error as Error).message}`);
        continue;
      }
      const failure = failureOf(result);
      if (failure) {
        if (failure.errorType === 'integrity')
          throw integrityError(hook, itemId, failure.message, failure.hint, failure.fix);
        options.onWarning?.(`Context hook '${hook.id}' skipped '${itemId}': ${failure.message}`);
        continue;
      }
      const content = interpolateText(resultContent(result), context);
      if (content.trim() === '') continue;
      const position = hook.position ?? 'before';
      const text = hook.wrap ? wrapContent(content, itemId, action.item_type, result) : content;
      (position === 'after' ? after : before).push(text);
      blocks.push({ id: itemId, content, role, position, hook_id: hook.id });
    }
  }
  return { before: before.join('\n\n'), after: after.join('\n\n'), blocks };
}

/**
 * `resolve_extends` (spec threads §5.3): the first hook, in the order given (project, user,
 * builtin — see `buildResolveExtendsHooks`), whose condition matches and which has a
 * `set_extends` action. Nothing is dispatched.
 */
export function resolveExtendsHook(
  context: unknown,
  hooks: readonly Hook[],
): { extends: string; hook_id: string } | null {
  for (const hook of hooksFor('resolve_extends', context, hooks)) {
    const action = hook.actions.find((a) => a.set_extends !== undefined);
    if (!action) continue;
    const target = interpolateString(action.set_extends!, context);
    if (typeof target === 'string' && target !== '') return { extends: target, hook_id: hook.id };
  }
  return null;
}
