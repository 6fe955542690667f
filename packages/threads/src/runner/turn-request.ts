/**
 * The request of one turn: the model call and the tool calls it makes (`streamTurn`), cut off at
 * the thread's duration limit or when it is stopped, with the time split between model and tools.
 */

import { DEFAULT_DISPATCH } from './dispatcher.js';
import type { LoopState } from './loop-state.js';
import type { LoopContext } from './loop-types.js';
import type { OutputCap } from './spend-cap.js';
import { streamTurn, type TurnResult } from './stream-turn.js';

export interface TurnReply {
  result: TurnResult;
  /** The duration limit cut the turn short (the next pre-turn check ends the thread). */
  outOfTime: boolean;
}

export async function requestTurn(
  ctx: LoopContext,
  state: LoopState,
  cap: OutputCap,
  turn: number,
): Promise<TurnReply> {
  const calledAt = performance.now();
  const deadline = turnDeadline(ctx, state);
  try {
    const result = await streamTurn(ctx, {
      model: ctx.model,
      system: ctx.system,
      tools: state.tools,
      maxTokens: 'maxTokens' in cap ? cap.maxTokens : ctx.maxTokens,
      messages: state.messages,
      turn,
      mode: ctx.streamMode ?? 'inline',
      dispatch: ctx.dispatchSettings ?? DEFAULT_DISPATCH,
      log: ctx.log,
      ...(ctx.spans ? { spans: ctx.spans } : {}),
      ...(ctx.textParser ? { textParser: ctx.textParser } : {}),
      ...(ctx.onData ? { onData: (data: string) => ctx.onData?.(data, turn) } : {}),
      signal: deadline.signal,
      ...(ctx.maxCallsPerTurn ? { maxCallsPerTurn: ctx.maxCallsPerTurn } : {}),
      usedIds: state.usedIds,
      ...(ctx.log.durable ? { durable: () => ctx.log.durable?.() ?? Promise.resolve() } : {}),
      stopReason: () => stopReason(ctx, state),
    });
    const { timing } = state;
    const turnMs = performance.now() - calledAt;
    timing.tools_ms += result.toolsAfterStreamMs;
    timing.provider_ms += turnMs - result.toolsAfterStreamMs;
    for (const ms of result.startDelaysMs) timing.tool_start_delays_ms.push(Math.round(ms * 1000) / 1000);
    return { result, outOfTime: deadline.outOfTime() };
  } finally {
    deadline.dispose();
  }
}

/** Why no further call may start: the thread was cancelled or reached its duration limit. */
function stopReason(ctx: LoopContext, state: LoopState): string | undefined {
  if (ctx.isCancelled()) return 'the thread was cancelled';
  if ((performance.now() - state.started) / 1000 >= ctx.limits.duration_seconds)
    return `the thread reached its duration limit (${ctx.limits.duration_seconds} s)`;
  return undefined;
}

/**
 * The duration limit holds inside a turn too: a model that streams slowly past it is cut off,
 * and the pre-turn check then ends the thread with duration_seconds_exceeded.
 */
function turnDeadline(ctx: LoopContext, state: LoopState) {
  const deadline = new AbortController();
  const onStop = () => deadline.abort();
  ctx.signal?.addEventListener('abort', onStop, { once: true });
  if (ctx.signal?.aborted) deadline.abort();
  let outOfTime = false;
  const left = ctx.limits.duration_seconds * 1000 - (performance.now() - state.started);
  const timer = setTimeout(
    () => {
      outOfTime = true;
      deadline.abort();
    },
    Math.max(0, Math.min(left, 2_147_483_647)),
  );
  return {
    signal: deadline.signal,
    outOfTime: () => outOfTime,
    dispose: () => {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onStop);
    },
  };
}
