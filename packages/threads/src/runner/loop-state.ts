/**
 * What one run of the turn loop carries from turn to turn: the conversation, the cost and timing
 * so far, the failure and nudge counters, and the bounds on the next request.
 */
import { clipText } from '@ryeos/lillux';
import type { ChatMessage, ToolDefinition } from '../provider/types.js';
import { type ThreadCost, ZERO_COST } from '../store/types.js';
import type { LoopContext, LoopResult, LoopTiming } from './loop-types.js';
import { capOutputTokens, fixedRequestBytes, InputTokenBound, type OutputCap } from './spend-cap.js';

export interface LoopState {
  readonly started: number;
  readonly timing: LoopTiming;
  readonly cost: ThreadCost;
  /** The conversation, shared with the context (`ctx.messages`): turns append to it. */
  readonly messages: ChatMessage[];
  readonly recentLlmErrors: Record<string, unknown>[];
  /** The tool definitions every request sends (none in text mode: the prompt holds them). */
  readonly tools: ToolDefinition[];
  readonly inputBound: InputTokenBound;
  /** Call ids already in the conversation (a continuation's carried calls stay taken). */
  readonly usedIds: Set<string>;
  consecutiveFailures: number;
  nudges: number;
  /** The turn count at the last attempt, so a retried turn does not checkpoint twice. */
  attemptTurn: number;
  firstTurn: boolean;
}

export function newLoopState(ctx: LoopContext): LoopState {
  const tools = ctx.textParser
    ? []
    : ctx.palette.entries.map(({ name, description, schema }) => ({ name, description, schema }));
  const usedIds = new Set<string>();
  for (const m of ctx.messages)
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) usedIds.add(c.id);
  const prior = ctx.resumedFrom?.cost;
  return {
    // A resumed run's duration limit counts the time its earlier process ran too.
    started: performance.now() - (prior?.elapsed_seconds ?? 0) * 1000,
    timing: { provider_ms: 0, tools_ms: 0, runner_ms: 0, tool_start_delays_ms: [], runner_ms_by_turn: [] },
    cost: prior ? { ...prior } : { ...ZERO_COST },
    messages: ctx.messages,
    recentLlmErrors: [],
    tools,
    inputBound: new InputTokenBound(fixedRequestBytes(ctx.system, tools)),
    usedIds,
    consecutiveFailures: 0,
    nudges: 0,
    attemptTurn: 0,
    // A resumed run's opening is already on record.
    firstTurn: !prior,
  };
}

/** Brings `cost.elapsed_seconds` up to now (two decimals). */
export function updateElapsed(state: LoopState): void {
  state.cost.elapsed_seconds = Math.round((performance.now() - state.started) / 10) / 100;
}

/** Adds a response's tokens and spend to the cost, and tells the ledger what it spent. */
export async function account(
  ctx: LoopContext,
  state: LoopState,
  usage: { inputTokens: number; outputTokens: number },
): Promise<void> {
  const { cost } = state;
  cost.input_tokens += usage.inputTokens;
  cost.output_tokens += usage.outputTokens;
  const delta =
    (usage.inputTokens * (ctx.pricing?.input ?? 0) + usage.outputTokens * (ctx.pricing?.output ?? 0)) / 1e6;
  cost.spend += delta;
  if (delta > 0) await ctx.onSpend(delta);
}

/**
 * Times one pass of the loop: call at its start, and the returned function at its end records
 * the pass's runner ms (its wall time less what the model and the tools took meanwhile).
 */
export function timePass(state: LoopState): () => void {
  const { timing } = state;
  const started = performance.now();
  const elsewhere = timing.provider_ms + timing.tools_ms;
  return () => {
    const ms = performance.now() - started - (timing.provider_ms + timing.tools_ms - elsewhere);
    timing.runner_ms_by_turn.push(Math.round(ms * 1000) / 1000);
  };
}

/** What the loop answers: the result, the final cost, and where the time went. */
export function finish(
  state: LoopState,
  result: LoopResult,
): { result: LoopResult; cost: ThreadCost; timing: LoopTiming } {
  updateElapsed(state);
  const { timing } = state;
  const round = (ms: number) => Math.round(ms * 100) / 100;
  timing.runner_ms = round(performance.now() - state.started - timing.provider_ms - timing.tools_ms);
  timing.provider_ms = round(timing.provider_ms);
  timing.tools_ms = round(timing.tools_ms);
  return { result, cost: state.cost, timing };
}

/** The last answer, calls and errors, for a result that ends the thread in error. */
export function errorContext(state: LoopState): Record<string, unknown> {
  const { messages } = state;
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  const toolCalls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
  const errors = messages.filter((m) => m.role === 'tool' && /error|denied/i.test(m.content));
  return {
    last_assistant: clipText(lastAssistant?.content ?? '', 500),
    recent_tool_calls: toolCalls.slice(-3).map((c) => ({ name: c.name, input: c.input })),
    recent_errors: errors.slice(-3).map((m) => clipText(m.content, 500)),
    recent_llm_errors: state.recentLlmErrors.slice(-3),
  };
}

/** The next request's max_tokens, or its refusal when the budget cannot pay for it. */
export async function outputCap(ctx: LoopContext, state: LoopState): Promise<OutputCap> {
  return capOutputTokens({
    remainingSpend: (await ctx.remainingSpend?.(state.cost)) ?? ctx.limits.spend - state.cost.spend,
    ...(ctx.pricing ? { pricing: ctx.pricing } : {}),
    inputTokens: state.inputBound.of(state.messages),
    maxTokens: ctx.maxTokens,
  });
}
