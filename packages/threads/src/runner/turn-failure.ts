/**
 * A turn whose model call failed: what it spent is accounted, the calls that completed before the
 * break stay in the conversation (the retry continues after them instead of running them again),
 * and the `error` hooks decide between a retry and the end of the thread.
 */
import type { ProviderCallErrorInfo } from '../provider/types.js';
import { account, type LoopState } from './loop-state.js';
import type { LoopContext, LoopResult } from './loop-types.js';
import { turnMessages } from './stream-turn.js';
import type { TurnReply } from './turn-request.js';

const MAX_CONSECUTIVE_FAILURES = 3;

/** The end of the thread, or undefined when the loop goes on (a retry, or a turn cut at the deadline). */
export async function afterFailedTurn(
  ctx: LoopContext,
  state: LoopState,
  { result, outOfTime }: TurnReply,
  info: ProviderCallErrorInfo,
): Promise<LoopResult | undefined> {
  await account(ctx, state, result.response.usage);
  if (result.calls.length > 0) for (const m of turnMessages(result)) state.messages.push(m);
  // Cut at the duration limit: the pre-turn check ends the thread with the limit's error.
  if (outOfTime && !ctx.isCancelled()) return undefined;
  state.consecutiveFailures += 1;
  state.recentLlmErrors.push({
    attempt: state.consecutiveFailures,
    error: info.message,
    error_type: info.errorClass,
    code: info.code ?? null,
    http_status: info.httpStatus,
  });
  if (info.errorClass === 'CancelledError' || ctx.isCancelled()) {
    return { success: false, status: 'cancelled', error: 'Thread cancelled' };
  }
  if (state.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
    return {
      success: false,
      error: `LLM call failed ${MAX_CONSECUTIVE_FAILURES} consecutive times: ${errorText(info)}`,
      ...hintOf(info),
      recent_llm_errors: state.recentLlmErrors.slice(-3),
    };
  }
  return askErrorHooks(ctx, state, info);
}

/** The `error` hooks: a retry after the policy's delay, a result of their own, or the error itself. */
async function askErrorHooks(
  ctx: LoopContext,
  state: LoopState,
  info: ProviderCallErrorInfo,
): Promise<LoopResult | undefined> {
  const classification = ctx.classifyError(info);
  const control = await ctx.hooks.control('error', {
    thread_id: ctx.threadId,
    error: {
      type: info.errorClass,
      message: info.message,
      code: info.code ?? null,
      http_status: info.httpStatus,
    },
    classification,
    cost: { ...state.cost },
  });
  if (control?.action === 'retry') {
    const seconds = ctx.retryDelay(classification, state.consecutiveFailures - 1, info);
    await (ctx.sleep ?? defaultSleep)(seconds * 1000, ctx.signal);
    return undefined;
  }
  const recent = { recent_llm_errors: state.recentLlmErrors.slice(-3) };
  const original = errorText(info);
  if (control) {
    const error = typeof control.error === 'string' && control.error.trim() ? control.error : original;
    return { ...hintOf(info), ...(control as LoopResult), success: false, error, ...recent };
  }
  return { success: false, error: original, ...hintOf(info), ...recent };
}

function errorText(error: ProviderCallErrorInfo): string {
  return error.httpStatus ? `${error.message} (HTTP ${error.httpStatus})` : error.message;
}

/** The provider error's hint (a model not found), for the thread's result. */
function hintOf(error: ProviderCallErrorInfo): { hint?: string } {
  return error.hint ? { hint: error.hint } : {};
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
