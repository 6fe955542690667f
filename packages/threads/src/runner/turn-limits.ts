/**
 * Before each turn: the limits (turns, tokens, spend, duration, and a budget too small to pay for
 * the next request), cancellation, the checkpoint of the turn before, and the first user message.
 */

import { errorContext, type LoopState, outputCap, updateElapsed } from './loop-state.js';
import type { LimitBreach, LoopContext, LoopResult } from './loop-types.js';
import { requiredOutputs } from './outputs.js';
import type { OutputCap } from './spend-cap.js';

export const TAKEN_OVER =
  'Another worker took this thread up while this one stalled; this run stopped without further effects.';

export const HANDED_BACK = 'The process running the thread stopped between turns; another takes it up.';

export type BeforeTurn = { end: LoopResult } | { cap: OutputCap; turn: number };

export async function beforeTurn(ctx: LoopContext, state: LoopState): Promise<BeforeTurn> {
  // First: a run that lost its thread sends no request and runs no limit hook.
  if (ctx.stillHolds && !(await ctx.stillHolds())) {
    return { end: { success: false, taken_over: true, error: TAKEN_OVER } };
  }
  updateElapsed(state);
  const cap = await outputCap(ctx, state);
  const breach = (await ctx.checkLimits(state.cost)) ?? spendBreach(ctx, state, cap);
  if (breach) return { end: await limitReached(ctx, state, breach) };
  if (ctx.isCancelled()) return { end: { success: false, status: 'cancelled', error: 'Thread cancelled' } };
  const { cost } = state;
  if (cost.turns > 0 && state.attemptTurn !== cost.turns) {
    ctx.log.checkpoint(cost.turns);
    ctx.onCheckpoint?.(cost.turns);
  }
  state.attemptTurn = cost.turns;
  // After the turn before's checkpoint: the next process takes the thread up from exactly there.
  if (ctx.isHandedBack?.()) return { end: { success: false, handed_back: true, error: HANDED_BACK } };
  const turn = cost.turns + 1;
  if (state.firstTurn) {
    const first = state.messages.at(-1);
    if (first?.role === 'user') ctx.log.emit('cognition_in', { text: first.content, role: 'user', turn });
    state.firstTurn = false;
  }
  return { cap, turn };
}

/** The spend limit, when what is left cannot pay for the next request's least cost. */
function spendBreach(ctx: LoopContext, state: LoopState, cap: OutputCap): LimitBreach | undefined {
  if (!('refused' in cap)) return undefined;
  return {
    limit_code: 'spend_exceeded',
    current_value: Math.round((state.cost.spend + cap.leastCost) * 1e6) / 1e6,
    current_max: ctx.limits.spend,
  };
}

/** The thread's end at a limit; the `limit` hooks may add to it (escalate, suspend). */
async function limitReached(ctx: LoopContext, state: LoopState, breach: LimitBreach): Promise<LoopResult> {
  const { cost } = state;
  const context = {
    ...breach,
    error_context: errorContext(state),
    thread_id: ctx.threadId,
    cost: { ...cost, tokens: cost.input_tokens + cost.output_tokens },
  };
  const control = await ctx.hooks.control('limit', context);
  const message = `Limit exceeded: ${breach.limit_code} (${breach.current_value}/${breach.current_max})`;
  // A hook may escalate or suspend; the error still says which limit stopped the thread.
  const decided: Partial<LoopResult> = control && control.action !== 'retry' ? (control as LoopResult) : {};
  const missing = requiredOutputs(ctx.outputs);
  return {
    ...decided,
    success: false,
    error: message,
    ...(typeof decided.error === 'string' && decided.error && decided.error !== 'Escalation requested'
      ? { hook_error: decided.error }
      : {}),
    limit_code: breach.limit_code,
    // The limit is why it stopped; what it still owed its caller is said too.
    ...(missing.length ? { missing_outputs: missing } : {}),
    error_context: errorContext(state),
  };
}
