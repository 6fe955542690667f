/**
 * The turn loop (spec threads §7.3): pre-turn limits and cancellation, one model call, exact
 * token and spend accounting, then the calls the model made — each permission-checked and run
 * through the same primary operations as every other caller — until the model returns its
 * outputs, answers without tools, or a limit, error or hook ends the thread.
 *
 * Everything the loop touches arrives in `LoopContext`, so it knows no file layout, database or
 * wire format. Each model call is a streaming turn (`stream-turn.ts`): tools start inside the
 * stream as each call completes.
 */
import { clipText } from '@ryeos/lillux';
import type { PrimaryDispatch } from '../host.js';
import type { ChatMessage, LanguageModel, ProviderCallErrorInfo } from '../provider/types.js';
import type { ThreadCost } from '../store/types.js';
import type { TextToolParser } from '../streaming/text-parser.js';
import type { OutputSpec, Permission } from './calls.js';
import { textOfMessages } from './calls.js';
import type { DispatchSettings } from './dispatcher.js';
import { DEFAULT_DISPATCH } from './dispatcher.js';
import type { Palette } from './palette.js';
import type { ResultGuard } from './result-guard.js';
import { capOutputTokens, fixedRequestBytes, InputTokenBound, type OutputCap } from './spend-cap.js';
import { type StreamMode, streamTurn, turnMessages } from './stream-turn.js';

export type { OutputSpec, Permission } from './calls.js';
export { cleanResult } from './calls.js';

/** A transcript as the loop sees it. */
export interface ThreadLog {
  emit(eventType: string, payload: Record<string, unknown>): void;
  /** Flushes droppable events, then appends a signed checkpoint. */
  checkpoint(turn: number): void;
}

export interface LimitBreach {
  limit_code: LimitCode;
  current_value: number;
  current_max: number;
}

import type { ErrorClassification } from '../hooks/errors.js';
import type { LimitCode, ThreadErrorCode } from '../result-codes.js';

export type { ErrorClassification };

/** A hook's control result (§5.5): `{action:'retry'}` or a result that ends the thread. */
export type ControlResult = Record<string, unknown>;

export interface LoopHooks {
  /** Runs every matching hook of a control event; answers the first control result, or null. */
  control(event: string, context: Record<string, unknown>): Promise<ControlResult | null>;
}

export interface LoopContext {
  threadId: string;
  directiveId: string;
  model: LanguageModel;
  system: string;
  /** The first user message (fresh) or the resumed conversation. */
  messages: ChatMessage[];
  /**
   * A run resumed from its transcript: what it already cost (the loop counts on from it), and
   * its conversation is already recorded, so no opening message is logged again.
   */
  resumedFrom?: { cost: ThreadCost };
  palette: Palette;
  /** Declared `<outputs>`, or undefined when the directive declares none. */
  outputs?: OutputSpec[];
  limits: { turns: number; tokens: number; spend: number; duration_seconds: number };
  pricing?: { input?: number; output?: number };
  maxTokens: number;
  contextWindow: number;
  /** Fraction of the context window that triggers the context_limit_reached path. */
  contextThreshold: number;
  /** `tool_use.mode`: the nudge applies to native tool use only. */
  nativeTools: boolean;
  /** Provider `stream.mode` (default inline: tools start inside the stream). */
  streamMode?: StreamMode;
  /** streaming.yaml batching (default 5 calls / 100 ms, 8 at once). */
  dispatchSettings?: DispatchSettings;
  /** For `tool_use.mode: text_parsed`: a fresh parser of calls written into the text. */
  textParser?: () => TextToolParser;
  /** Calls one response may make (streaming.yaml `max_tool_calls_per_turn`, 64). */
  maxCallsPerTurn?: number;
  /** The orchestrator, scoped to this thread (see `CallContext.orchestrate`). */
  orchestrate?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Every raw SSE payload with its turn, for the optional stream sinks. */
  onData?: (data: string, turn: number) => void;
  log: ThreadLog;
  hooks: LoopHooks;
  permission: Permission;
  dispatch: PrimaryDispatch;
  guard: ResultGuard;
  checkLimits(cost: ThreadCost): LimitBreach | undefined | Promise<LimitBreach | undefined>;
  /** What the thread may still spend (its limit and its ledger's remaining); default its limit. */
  remainingSpend?(cost: ThreadCost): number | Promise<number>;
  classifyError(error: ProviderCallErrorInfo): ErrorClassification;
  /** Seconds to wait before retry `attempt` (0-based consecutive failure index). */
  retryDelay(classification: ErrorClassification, attempt: number, error: ProviderCallErrorInfo): number;
  /** True once the thread was asked to stop (in-process signal or a marker another process wrote). */
  isCancelled(): boolean;
  signal?: AbortSignal;
  /** Called after every model response with the spend it added (the ledger's `increment_actual`). */
  onSpend(delta: number): void | Promise<void>;
  onCostSnapshot(cost: ThreadCost): void | Promise<void>;
  /**
   * At the context threshold: registers the continuation thread, links it and records the
   * handoff; answers its id, or undefined when it could not (the hooks decide then).
   */
  prepareHandoff?(turn: number): Promise<string | HandoffRefused | undefined>;
  /** Builds the rendering of the directive's knowledge transcript (best effort). */
  onCheckpoint?(turn: number): void;
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Where a thread's wall time went: the model, the tools, and the runner itself. */
export interface LoopTiming {
  provider_ms: number;
  tools_ms: number;
  runner_ms: number;
  /** Per call run: ms from its completion in the stream to its start (streaming, seed 002). */
  tool_start_delays_ms: number[];
}

/** Why a thread that filled its context window may not hand off: it ends in error with this. */
export interface HandoffRefused {
  error: string;
  error_code: ThreadErrorCode;
}

export interface LoopResult {
  success: boolean;
  status?: 'completed' | 'error' | 'cancelled' | 'continued';
  result?: string;
  outputs?: Record<string, unknown>;
  error?: string;
  limit_code?: string;
  error_context?: Record<string, unknown>;
  recent_llm_errors?: Record<string, unknown>[];
  [key: string]: unknown;
}

const NUDGE_TOOLS = 'You did not call any tools. Use the provided tools to complete the directive steps.';
const NUDGE_RETURN =
  'You have not yet called directive_return. The directive requires structured outputs. Continue working: use tools to complete all steps, then call directive_return to return your results.';
const MAX_NUDGES = 2;
const MAX_CONSECUTIVE_FAILURES = 3;
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

function errorText(error: ProviderCallErrorInfo): string {
  return error.httpStatus ? `${error.message} (HTTP ${error.httpStatus})` : error.message;
}

/** The provider error's hint (a model not found), for the thread's result. */
function hintOf(error: ProviderCallErrorInfo): { hint?: string } {
  return error.hint ? { hint: error.hint } : {};
}

/** Runs the loop to its end; never throws for a model or tool failure (they end in the result). */
export async function runLoop(
  ctx: LoopContext,
): Promise<{ result: LoopResult; cost: ThreadCost; timing: LoopTiming }> {
  const prior = ctx.resumedFrom?.cost;
  // A resumed run's duration limit counts the time its earlier process ran too.
  const started = performance.now() - (prior?.elapsed_seconds ?? 0) * 1000;
  const timing: LoopTiming = { provider_ms: 0, tools_ms: 0, runner_ms: 0, tool_start_delays_ms: [] };
  const sleep = ctx.sleep ?? defaultSleep;
  const messages = ctx.messages;
  const cost: ThreadCost = prior
    ? { ...prior }
    : { turns: 0, input_tokens: 0, output_tokens: 0, spend: 0, elapsed_seconds: 0 };
  const recentLlmErrors: Record<string, unknown>[] = [];
  let consecutiveFailures = 0;
  let nudges = 0;
  let attemptTurn = 0;
  const elapsed = () => {
    cost.elapsed_seconds = Math.round((performance.now() - started) / 10) / 100;
  };
  const spendOf = (input: number, output: number) =>
    (input * (ctx.pricing?.input ?? 0) + output * (ctx.pricing?.output ?? 0)) / 1e6;

  const account = async (usage: { inputTokens: number; outputTokens: number }) => {
    cost.input_tokens += usage.inputTokens;
    cost.output_tokens += usage.outputTokens;
    const delta = spendOf(usage.inputTokens, usage.outputTokens);
    cost.spend += delta;
    if (delta > 0) await ctx.onSpend(delta);
  };

  const finish = (result: LoopResult) => {
    elapsed();
    const round = (ms: number) => Math.round(ms * 100) / 100;
    timing.runner_ms = round(performance.now() - started - timing.provider_ms - timing.tools_ms);
    timing.provider_ms = round(timing.provider_ms);
    timing.tools_ms = round(timing.tools_ms);
    return { result, cost, timing };
  };

  const errorContext = () => {
    const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
    const toolCalls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
    const errors = messages.filter((m) => m.role === 'tool' && /error|denied/i.test(m.content));
    return {
      last_assistant: clipText(lastAssistant?.content ?? '', 500),
      recent_tool_calls: toolCalls.slice(-3).map((c) => ({ name: c.name, input: c.input })),
      recent_errors: errors.slice(-3).map((m) => clipText(m.content, 500)),
      recent_llm_errors: recentLlmErrors.slice(-3),
    };
  };

  const tools = ctx.textParser
    ? []
    : ctx.palette.entries.map(({ name, description, schema }) => ({ name, description, schema }));
  const inputBound = new InputTokenBound(fixedRequestBytes(ctx.system, tools));
  // The next request's max_tokens, or its refusal when the budget cannot pay for it.
  const outputCap = async (): Promise<OutputCap> =>
    capOutputTokens({
      remainingSpend: (await ctx.remainingSpend?.(cost)) ?? ctx.limits.spend - cost.spend,
      ...(ctx.pricing ? { pricing: ctx.pricing } : {}),
      inputTokens: inputBound.of(messages),
      maxTokens: ctx.maxTokens,
    });

  // Ids already in the conversation (a continuation's carried calls) stay taken.
  const usedIds = new Set<string>();
  for (const m of messages) if (m.role === 'assistant') for (const c of m.tool_calls ?? []) usedIds.add(c.id);

  let firstTurn = !prior;
  try {
    for (;;) {
      elapsed();
      const tokens = cost.input_tokens + cost.output_tokens;
      const cap = await outputCap();
      const breach =
        (await ctx.checkLimits(cost)) ??
        ('refused' in cap
          ? {
              limit_code: 'spend_exceeded',
              current_value: Math.round((cost.spend + cap.leastCost) * 1e6) / 1e6,
              current_max: ctx.limits.spend,
            }
          : undefined);
      if (breach) {
        const context = {
          ...breach,
          error_context: errorContext(),
          thread_id: ctx.threadId,
          cost: { ...cost, tokens },
        };
        const control = await ctx.hooks.control('limit', context);
        const message = `Limit exceeded: ${breach.limit_code} (${breach.current_value}/${breach.current_max})`;
        // A hook may escalate or suspend; the error still says which limit stopped the thread.
        const decided: Partial<LoopResult> =
          control && control.action !== 'retry' ? (control as LoopResult) : {};
        return finish({
          ...decided,
          success: false,
          error: message,
          ...(typeof decided.error === 'string' && decided.error && decided.error !== 'Escalation requested'
            ? { hook_error: decided.error }
            : {}),
          limit_code: breach.limit_code,
          // The limit is why it stopped; what it still owed its caller is said too.
          ...(requiredOutputs(ctx.outputs).length ? { missing_outputs: requiredOutputs(ctx.outputs) } : {}),
          error_context: errorContext(),
        });
      }
      if (ctx.isCancelled())
        return finish({ success: false, status: 'cancelled', error: 'Thread cancelled' });
      if (cost.turns > 0 && attemptTurn !== cost.turns) {
        ctx.log.checkpoint(cost.turns);
        ctx.onCheckpoint?.(cost.turns);
      }
      attemptTurn = cost.turns;
      const turn = cost.turns + 1;
      if (firstTurn) {
        const first = messages.at(-1);
        if (first?.role === 'user') ctx.log.emit('cognition_in', { text: first.content, role: 'user', turn });
        firstTurn = false;
      }

      const calledAt = performance.now();
      // The duration limit holds inside a turn too: a model that streams slowly past it is cut
      // off, and the pre-turn check then ends the thread with duration_seconds_exceeded.
      const deadline = new AbortController();
      const onStop = () => deadline.abort();
      ctx.signal?.addEventListener('abort', onStop, { once: true });
      if (ctx.signal?.aborted) deadline.abort();
      let outOfTime = false;
      const left = ctx.limits.duration_seconds * 1000 - (performance.now() - started);
      const timer = setTimeout(
        () => {
          outOfTime = true;
          deadline.abort();
        },
        Math.max(0, Math.min(left, 2_147_483_647)),
      );
      const result = await streamTurn(ctx, {
        model: ctx.model,
        system: ctx.system,
        tools,
        maxTokens: 'maxTokens' in cap ? cap.maxTokens : ctx.maxTokens,
        messages,
        turn,
        mode: ctx.streamMode ?? 'inline',
        dispatch: ctx.dispatchSettings ?? DEFAULT_DISPATCH,
        log: ctx.log,
        ...(ctx.textParser ? { textParser: ctx.textParser } : {}),
        ...(ctx.onData ? { onData: (data: string) => ctx.onData?.(data, turn) } : {}),
        signal: deadline.signal,
        ...(ctx.maxCallsPerTurn ? { maxCallsPerTurn: ctx.maxCallsPerTurn } : {}),
        usedIds,
        stopReason: () => {
          if (ctx.isCancelled()) return 'the thread was cancelled';
          if ((performance.now() - started) / 1000 >= ctx.limits.duration_seconds)
            return `the thread reached its duration limit (${ctx.limits.duration_seconds} s)`;
          return undefined;
        },
      });
      const turnMs = performance.now() - calledAt;
      timing.tools_ms += result.toolsAfterStreamMs;
      timing.provider_ms += turnMs - result.toolsAfterStreamMs;
      for (const ms of result.startDelaysMs) timing.tool_start_delays_ms.push(Math.round(ms * 1000) / 1000);
      const reply = result.response;
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onStop);
      if (result.error && outOfTime && !ctx.isCancelled()) {
        await account(reply.usage);
        if (result.calls.length > 0) for (const m of turnMessages(result)) messages.push(m);
        continue;
      }
      if (result.error) {
        await account(reply.usage);
        // Calls that completed before the break ran; they stay in the conversation so the retry
        // continues after them instead of running them again.
        if (result.calls.length > 0) for (const m of turnMessages(result)) messages.push(m);
        const info = result.error;
        consecutiveFailures += 1;
        const classification = ctx.classifyError(info);
        recentLlmErrors.push({
          attempt: consecutiveFailures,
          error: info.message,
          error_type: info.errorClass,
          code: info.code ?? null,
          http_status: info.httpStatus,
        });
        if (info.errorClass === 'CancelledError' || ctx.isCancelled()) {
          return finish({ success: false, status: 'cancelled', error: 'Thread cancelled' });
        }
        if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
          return finish({
            success: false,
            error: `LLM call failed ${MAX_CONSECUTIVE_FAILURES} consecutive times: ${errorText(info)}`,
            ...hintOf(info),
            recent_llm_errors: recentLlmErrors.slice(-3),
          });
        }
        const control = await ctx.hooks.control('error', {
          thread_id: ctx.threadId,
          error: {
            type: info.errorClass,
            message: info.message,
            code: info.code ?? null,
            http_status: info.httpStatus,
          },
          classification,
          cost: { ...cost },
        });
        if (control?.action === 'retry') {
          const seconds = ctx.retryDelay(classification, consecutiveFailures - 1, info);
          await sleep(seconds * 1000, ctx.signal);
          continue;
        }
        const original = errorText(info);
        if (control) {
          const error = typeof control.error === 'string' && control.error.trim() ? control.error : original;
          return finish({
            ...hintOf(info),
            ...(control as LoopResult),
            success: false,
            error,
            recent_llm_errors: recentLlmErrors.slice(-3),
          });
        }
        return finish({
          success: false,
          error: original,
          ...hintOf(info),
          recent_llm_errors: recentLlmErrors.slice(-3),
        });
      }

      consecutiveFailures = 0;
      cost.turns += 1;
      await account(reply.usage);
      inputBound.calibrate(reply.usage.inputTokens);

      if (result.calls.length === 0) {
        const required = requiredOutputs(ctx.outputs);
        // Text mode gets the return nudge too when outputs are required: ending in error without
        // one would punish a model for a single answer in prose.
        const canNudge =
          ctx.palette.entries.length > 0 &&
          nudges < MAX_NUDGES &&
          ((ctx.nativeTools && (turn === 1 || ctx.outputs)) || (!ctx.nativeTools && required.length > 0));
        if (canNudge) {
          nudges += 1;
          const nudge = ctx.outputs ? NUDGE_RETURN : NUDGE_TOOLS;
          messages.push({ role: 'assistant', content: reply.text }, { role: 'user', content: nudge });
          ctx.log.emit('cognition_in', { text: nudge, role: 'user', turn: turn + 1 });
          await afterStep(ctx, cost);
          continue;
        }
        await afterStep(ctx, cost);
        if (required.length > 0) return finish(outputsMissing(reply.text, required));
        return finish({ success: true, result: reply.text });
      }

      for (const m of turnMessages(result)) messages.push(m);
      const returned = result.returned;
      if (returned) {
        await ctx.hooks
          .control('directive_return', { outputs: returned, cost: { ...cost }, thread_id: ctx.threadId })
          .catch(() => null);
        await afterStep(ctx, cost);
        if (returned.status === 'error') {
          const detail =
            typeof returned.error_detail === 'string' && returned.error_detail
              ? returned.error_detail
              : 'no detail given';
          return finish({
            success: false,
            result: reply.text,
            outputs: returned,
            error: `The directive reported an error: ${detail}`,
          });
        }
        return finish({ success: true, result: reply.text, outputs: returned });
      }
      await afterStep(ctx, cost);

      const estimated = textOfMessages(messages) / 4;
      const ratio = estimated / ctx.contextWindow;
      if (ratio >= ctx.contextThreshold) {
        ctx.log.emit('context_limit_reached', {
          usage_ratio: Math.round(ratio * 1000) / 1000,
          tokens_used: Math.round(estimated),
          tokens_limit: ctx.contextWindow,
        });
        // Hand off to a continuation thread (§10.6); the hooks decide only when that fails. A
        // thread whose budget is spent does not: the limit check ends it on its next pass.
        const next = (await ctx.checkLimits(cost)) ? undefined : await ctx.prepareHandoff?.(cost.turns);
        if (typeof next === 'object') return finish({ success: false, ...next });
        if (next) {
          return finish({
            success: true,
            status: 'continued',
            result: reply.text,
            continuation_thread_id: next,
          });
        }
        const control = await ctx.hooks.control('context_limit_reached', {
          usage_ratio: ratio,
          tokens_used: Math.round(estimated),
          tokens_limit: ctx.contextWindow,
          thread_id: ctx.threadId,
        });
        if (control && control.action === 'continue')
          return finish({ success: true, status: 'continued', result: reply.text });
        if (control) return finish(control as LoopResult);
      }
    }
  } catch (error) {
    // The loop never throws (its callers finalize on what it returns): a defect, or a model
    // answer no transcript can hold, ends the thread as an error, with its cost so far.
    return finish({
      success: false,
      error: `The thread stopped on an internal error: ${(error as Error)?.message ?? String(error)}`,
    });
  }
}

/** The names of the outputs a directive requires; empty when it declares none or none required. */
function requiredOutputs(outputs: readonly OutputSpec[] | undefined): string[] {
  return (outputs ?? []).filter((o) => o.required).map((o) => o.name);
}

/** A thread that stopped answering without returning the outputs its directive requires. */
function outputsMissing(text: string, required: readonly string[]): LoopResult {
  return {
    success: false,
    result: text,
    error: `The thread ended without returning its required outputs (${required.join(', ')}): the model answered without calling directive_return`,
    error_code: 'required_outputs_missing',
    missing_outputs: [...required],
  };
}

async function afterStep(ctx: LoopContext, cost: ThreadCost): Promise<void> {
  await ctx.hooks.control('after_step', { cost: { ...cost }, thread_id: ctx.threadId }).catch(() => null);
  await ctx.onCostSnapshot({ ...cost });
}
