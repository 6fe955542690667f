/**
 * A thread's hooks bound to its host: actions run through the four primary operations (not
 * permission-checked: hooks are the directive's and the user's own, §4 "Check"), except the two
 * internal tools, which run in-process — the control tool's `null` must stay `null` (an upstream
 * subprocess turned it into `{stdout:"{}"}` and ended threads), and the emitter writes to this
 * thread's own transcript. A knowledge item is read in-process too, through the run's executor
 * (which always has the threads bundle), so the knowledge the shipped hooks call is found
 * whatever the host's dispatch knows.
 */
import { executeKnowledge } from '@ryeos/directives';
import type { ContextInjection, HookDispatch } from './hooks/dispatch.js';
import {
  CONTROL_TOOL_ID,
  controlToolResult,
  EMITTER_TOOL_ID,
  emitterEvent,
  resolveExtendsHook,
  runContextHooks,
  runControlHooks,
} from './hooks/dispatch.js';
import type { Hook, HookAction, HookEvent } from './hooks/layers.js';
import { bareItemId } from './hooks/layers.js';
import type { ThreadHost } from './host.js';
import type { ControlResult, LoopHooks, ThreadLog } from './runner/loop.js';

export interface HookRunnerOptions {
  hooks: readonly Hook[];
  host: Pick<ThreadHost, 'dispatch' | 'executor'>;
  threadId: string;
  log?: ThreadLog;
  suppress?: readonly string[];
  onWarning?(message: string): void;
}

export class HookRunner implements LoopHooks {
  private readonly dispatchAction: HookDispatch;

  constructor(private readonly options: HookRunnerOptions) {
    this.dispatchAction = async (action: HookAction) => this.run(action);
  }

  private async run(action: HookAction): Promise<unknown> {
    const id = action.item_id ? bareItemId(action.item_id) : '';
    if (action.primary === 'execute' && id === CONTROL_TOOL_ID) return controlToolResult(action.params);
    if (action.primary === 'execute' && id === EMITTER_TOOL_ID) {
      const event = emitterEvent(action.params);
      this.options.log?.emit(event.event_type, event.payload);
      return { success: true };
    }
    const knowledge = action.item_type === 'knowledge' || action.item_id?.startsWith('knowledge:');
    if (action.primary === 'execute' && knowledge && id)
      return executeKnowledge(this.options.host.executor, id);
    const target = {
      ...(action.item_type ? { item_type: action.item_type } : {}),
      ...(action.item_id ? { item_id: action.item_id } : {}),
    };
    const args =
      action.primary === 'execute'
        ? { ...target, parameters: action.params }
        : { ...action.params, ...target };
    return this.options.host.dispatch({ primary: action.primary, args, threadId: this.options.threadId });
  }

  private get runOptions() {
    return {
      dispatch: this.dispatchAction,
      ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}),
    };
  }

  control(event: string, context: Record<string, unknown>): Promise<ControlResult | null> {
    return runControlHooks(
      event as HookEvent,
      context,
      this.options.hooks,
      this.runOptions,
    ) as Promise<ControlResult | null>;
  }

  context(event: HookEvent, context: Record<string, unknown>): Promise<ContextInjection> {
    return runContextHooks(event, context, this.options.hooks, this.options.suppress ?? [], this.runOptions);
  }

  /** The directive id a `resolve_extends` hook sets, if any. */
  resolveExtends(context: Record<string, unknown>): string | undefined {
    return resolveExtendsHook(context, this.options.hooks)?.extends;
  }
}
