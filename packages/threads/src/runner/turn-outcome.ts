/**
 * After a turn whose model call succeeded: the answer without calls (a nudge, or the end of the
 * thread), the directive's return, or the calls' results and the context-window check.
 */
import type { ModelResponse } from '../provider/types.js';
import { textOfMessages } from './calls.js';
import { account, type LoopState } from './loop-state.js';
import type { LoopContext, LoopResult } from './loop-types.js';
import { outputsMissing, requiredOutputs } from './outputs.js';
import { type TurnResult, turnMessages } from './stream-turn.js';

const NUDGE_TOOLS = 'You did not call any tools. Use the provided tools to complete the directive steps.';
const NUDGE_RETURN =
  'You have not yet called directive_return. The directive requires structured outputs. Continue working: use tools to complete all steps, then call directive_return to return your results.';
const MAX_NUDGES = 2;

/** The end of the thread, or undefined when the loop goes on to the next turn. */
export async function afterTurn(
  ctx: LoopContext,
  state: LoopState,
  result: TurnResult,
  turn: number,
): Promise<LoopResult | undefined> {
  state.consecutiveFailures = 0;
  state.cost.turns += 1;
  await account(ctx, state, result.response.usage);
  state.inputBound.calibrate(result.response.usage.inputTokens);
  if (result.calls.length === 0) return answeredWithoutCalls(ctx, state, result.response, turn);
  for (const m of turnMessages(result)) state.messages.push(m);
  if (result.returned) return directiveReturned(ctx, state, result.response, result.returned);
  await afterStep(ctx, state);
  return contextCheck(ctx, state, result.response);
}

/** A nudge back to the tools while one is allowed; else the answer ends the thread. */
async function answeredWithoutCalls(
  ctx: LoopContext,
  state: LoopState,
  reply: ModelResponse,
  turn: number,
): Promise<LoopResult | undefined> {
  const required = requiredOutputs(ctx.outputs);
  // Text mode gets the return nudge too when outputs are required: ending in error without
  // one would punish a model for a single answer in prose.
  const canNudge =
    ctx.palette.entries.length > 0 &&
    state.nudges < MAX_NUDGES &&
    ((ctx.nativeTools && (turn === 1 || ctx.outputs)) || (!ctx.nativeTools && required.length > 0));
  if (canNudge) {
    state.nudges += 1;
    const nudge = ctx.outputs ? NUDGE_RETURN : NUDGE_TOOLS;
    state.messages.push({ role: 'assistant', content: reply.text }, { role: 'user', content: nudge });
    ctx.log.emit('cognition_in', { text: nudge, role: 'user', turn: turn + 1 });
    await afterStep(ctx, state);
    return undefined;
  }
  await afterStep(ctx, state);
  if (required.length > 0) return outputsMissing(reply.text, required);
  return { success: true, result: reply.text };
}

/** The directive returned its outputs (or reported an error): the thread ends with them. */
async function directiveReturned(
  ctx: LoopContext,
  state: LoopState,
  reply: ModelResponse,
  returned: Record<string, unknown>,
): Promise<LoopResult> {
  await ctx.hooks
    .control('directive_return', { outputs: returned, cost: { ...state.cost }, thread_id: ctx.threadId })
    .catch(() => null);
  await afterStep(ctx, state);
  if (returned.status === 'error') {
    const detail =
      typeof returned.error_detail === 'string' && returned.error_detail
        ? returned.error_detail
        : 'no detail given';
    return {
      success: false,
      result: reply.text,
      outputs: returned,
      error: `The directive reported an error: ${detail}`,
    };
  }
  return { success: true, result: reply.text, outputs: returned };
}

/**
 * At the context threshold the thread hands off to a continuation; the hooks decide only when
 * that fails. A thread whose budget is spent does not: the limit check ends it on its next pass.
 */
async function contextCheck(
  ctx: LoopContext,
  state: LoopState,
  reply: ModelResponse,
): Promise<LoopResult | undefined> {
  const estimated = textOfMessages(state.messages) / 4;
  const ratio = estimated / ctx.contextWindow;
  if (ratio < ctx.contextThreshold) return undefined;
  ctx.log.emit('context_limit_reached', {
    usage_ratio: Math.round(ratio * 1000) / 1000,
    tokens_used: Math.round(estimated),
    tokens_limit: ctx.contextWindow,
  });
  const next = (await ctx.checkLimits(state.cost)) ? undefined : await ctx.prepareHandoff?.(state.cost.turns);
  if (typeof next === 'object') return { success: false, ...next };
  if (next) return { success: true, status: 'continued', result: reply.text, continuation_thread_id: next };
  const control = await ctx.hooks.control('context_limit_reached', {
    usage_ratio: ratio,
    tokens_used: Math.round(estimated),
    tokens_limit: ctx.contextWindow,
    thread_id: ctx.threadId,
  });
  if (control && control.action === 'continue')
    return { success: true, status: 'continued', result: reply.text };
  if (control) return control as LoopResult;
  return undefined;
}

/** The `after_step` hooks, then the registry's cost snapshot. */
async function afterStep(ctx: LoopContext, state: LoopState): Promise<void> {
  await ctx.hooks
    .control('after_step', { cost: { ...state.cost }, thread_id: ctx.threadId })
    .catch(() => null);
  await ctx.onCostSnapshot({ ...state.cost });
}
