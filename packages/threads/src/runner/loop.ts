/**
 * The turn loop (spec threads §7.3): pre-turn limits and cancellation, one model call, exact
 * token and spend accounting, then the calls the model made — each permission-checked and run
 * through the same primary operations as every other caller — until the model returns its
 * outputs, answers without tools, or a limit, error or hook ends the thread.
 *
 * Everything the loop touches arrives in `LoopContext`, so it knows no file layout, database or
 * wire format. In this issue tools run after the stream; the streaming issue starts them inside.
 */
import type { PrimaryCall, PrimaryDispatch } from '../host.js';
import type {
  ChatMessage,
  LanguageModel,
  ModelResponse,
  ProviderCallErrorInfo,
  ToolCall,
} from '../provider/types.js';
import type { ThreadCost } from '../store/types.js';
import type { Palette, PaletteEntry } from './palette.js';
import { DIRECTIVE_RETURN_ID, READ_ARTIFACT_ID } from './palette.js';
import type { ResultGuard } from './result-guard.js';

/** A transcript as the loop sees it. */
export interface ThreadLog {
  emit(eventType: string, payload: Record<string, unknown>): void;
  /** Flushes droppable events, then appends a signed checkpoint. */
  checkpoint(turn: number): void;
}

export interface LimitBreach {
  limit_code: string;
  current_value: number;
  current_max: number;
}

import type { ErrorClassification } from '../hooks/errors.js';

export type { ErrorClassification };

/** A hook's control result (§5.5): `{action:'retry'}` or a result that ends the thread. */
export type ControlResult = Record<string, unknown>;

export interface LoopHooks {
  /** Runs every matching hook of a control event; answers the first control result, or null. */
  control(event: string, context: Record<string, unknown>): Promise<ControlResult | null>;
}

export interface Permission {
  /** undefined: allowed; otherwise the denial that goes back to the model as the tool result. */
  check(call: ToolCall, entry: PaletteEntry | undefined): Record<string, unknown> | undefined;
}

export interface OutputSpec {
  name: string;
  required: boolean;
}

export interface LoopContext {
  threadId: string;
  directiveId: string;
  model: LanguageModel;
  system: string;
  /** The first user message (fresh) or the resumed conversation. */
  messages: ChatMessage[];
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
  log: ThreadLog;
  hooks: LoopHooks;
  permission: Permission;
  dispatch: PrimaryDispatch;
  guard: ResultGuard;
  checkLimits(cost: ThreadCost): LimitBreach | undefined;
  classifyError(error: ProviderCallErrorInfo): ErrorClassification;
  /** Seconds to wait before retry `attempt` (0-based consecutive failure index). */
  retryDelay(classification: ErrorClassification, attempt: number, error: ProviderCallErrorInfo): number;
  /** True once the thread was asked to stop (in-process signal or a marker another process wrote). */
  isCancelled(): boolean;
  signal?: AbortSignal;
  /** Called after every model response with the spend it added (the ledger's `increment_actual`). */
  onSpend(delta: number): void;
  onCostSnapshot(cost: ThreadCost): void;
  /** Builds the rendering of the directive's knowledge transcript (best effort). */
  onCheckpoint?(turn: number): void;
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Where a thread's wall time went: the model, the tools, and the runner itself. */
export interface LoopTiming {
  provider_ms: number;
  tools_ms: number;
  runner_ms: number;
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
const DROPPED_KEYS = new Set(['chain', 'metadata', 'path', 'source', 'resolved_env_keys']);
const SIGNATURE_LINE = /^.*rye:signed:.*(\r?\n|$)/gm;

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

function isMap(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === 'object' && !Array.isArray(value);
}

/** What a model reads of a tool's envelope: the data of `rye/` tools, without bookkeeping. */
export function cleanResult(itemId: string, envelope: Record<string, unknown>): unknown {
  let body: unknown = envelope;
  if (envelope.status === 'success' && itemId.startsWith('rye/') && 'data' in envelope) body = envelope.data;
  if (!isMap(body)) return typeof body === 'string' ? body.replace(SIGNATURE_LINE, '') : body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (DROPPED_KEYS.has(key)) continue;
    out[key] = key === 'content' && typeof value === 'string' ? value.replace(SIGNATURE_LINE, '') : value;
  }
  return out;
}

/** The id of the item a palette call runs: the inner item of `rye_execute`, else the entry's own. */
function executedItem(call: ToolCall, entry: PaletteEntry | undefined): string | undefined {
  if (!entry) return undefined;
  if (entry.kind !== 'primary' || entry.primary !== 'execute') return entry.itemId;
  const raw = call.input.item_id;
  return typeof raw === 'string' ? raw.replace(/^tool:/, '') : undefined;
}

function isDirectiveReturn(call: ToolCall, entry: PaletteEntry | undefined): boolean {
  if (entry?.kind === 'directive_return') return true;
  return (
    entry?.kind === 'primary' &&
    entry.primary === 'execute' &&
    executedItem(call, entry) === DIRECTIVE_RETURN_ID
  );
}

/** A primary call for a palette entry; rye_execute's own arguments go through as they are. */
function primaryCallOf(
  call: ToolCall,
  entry: PaletteEntry,
  threadId: string,
  signal?: AbortSignal,
): PrimaryCall {
  const base = { threadId, ...(signal ? { signal } : {}) };
  if (entry.kind === 'tool') {
    return { ...base, primary: 'execute', args: { item_id: `tool:${entry.itemId}`, parameters: call.input } };
  }
  return { ...base, primary: entry.primary, args: call.input };
}

function textOfMessages(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content.length;
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) chars += JSON.stringify(c.input).length;
  }
  return chars;
}

function errorText(error: ProviderCallErrorInfo): string {
  return error.httpStatus ? `${error.message} (HTTP ${error.httpStatus})` : error.message;
}

/** Runs the loop to its end; never throws for a model or tool failure (they end in the result). */
export async function runLoop(
  ctx: LoopContext,
): Promise<{ result: LoopResult; cost: ThreadCost; timing: LoopTiming }> {
  const started = performance.now();
  const timing: LoopTiming = { provider_ms: 0, tools_ms: 0, runner_ms: 0 };
  const sleep = ctx.sleep ?? defaultSleep;
  const messages = ctx.messages;
  const cost: ThreadCost = { turns: 0, input_tokens: 0, output_tokens: 0, spend: 0, elapsed_seconds: 0 };
  const recentLlmErrors: Record<string, unknown>[] = [];
  let consecutiveFailures = 0;
  let nudges = 0;
  let attemptTurn = 0;
  const elapsed = () => {
    cost.elapsed_seconds = Math.round((performance.now() - started) / 10) / 100;
  };
  const spendOf = (input: number, output: number) =>
    (input * (ctx.pricing?.input ?? 0) + output * (ctx.pricing?.output ?? 0)) / 1e6;

  const account = (usage: { inputTokens: number; outputTokens: number }) => {
    cost.input_tokens += usage.inputTokens;
    cost.output_tokens += usage.outputTokens;
    const delta = spendOf(usage.inputTokens, usage.outputTokens);
    cost.spend += delta;
    if (delta > 0) ctx.onSpend(delta);
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
      last_assistant: lastAssistant?.content.slice(0, 500) ?? '',
      recent_tool_calls: toolCalls.slice(-3).map((c) => ({ name: c.name, input: c.input })),
      recent_errors: errors.slice(-3).map((m) => m.content.slice(0, 500)),
      recent_llm_errors: recentLlmErrors.slice(-3),
    };
  };

  let firstTurn = true;
  for (;;) {
    elapsed();
    const tokens = cost.input_tokens + cost.output_tokens;
    const breach = ctx.checkLimits(cost);
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
        error_context: errorContext(),
      });
    }
    if (ctx.isCancelled()) return finish({ success: false, status: 'cancelled', error: 'Thread cancelled' });
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
    const response = await callModel(ctx, messages);
    timing.provider_ms += performance.now() - calledAt;
    if ('error' in response) {
      account(response.partial.usage);
      const info = response.error;
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
          ...(control as LoopResult),
          success: false,
          error,
          recent_llm_errors: recentLlmErrors.slice(-3),
        });
      }
      return finish({ success: false, error: original, recent_llm_errors: recentLlmErrors.slice(-3) });
    }

    consecutiveFailures = 0;
    const reply = response.response;
    cost.turns += 1;
    account(reply.usage);
    ctx.log.emit('cognition_out', {
      text: reply.text,
      model: ctx.model.modelId,
      turn,
      tool_count: reply.toolCalls.length,
      is_partial: false,
    });
    if (reply.reasoning) ctx.log.emit('cognition_reasoning', { text: reply.reasoning, turn });

    if (reply.toolCalls.length === 0) {
      const canNudge =
        ctx.nativeTools &&
        ctx.palette.entries.length > 0 &&
        nudges < MAX_NUDGES &&
        (turn === 1 || ctx.outputs);
      if (canNudge) {
        nudges += 1;
        const nudge = ctx.outputs ? NUDGE_RETURN : NUDGE_TOOLS;
        messages.push({ role: 'assistant', content: reply.text }, { role: 'user', content: nudge });
        ctx.log.emit('cognition_in', { text: nudge, role: 'user', turn: turn + 1 });
        await afterStep(ctx, cost);
        continue;
      }
      await afterStep(ctx, cost);
      return finish({ success: true, result: reply.text });
    }

    messages.push({ role: 'assistant', content: reply.text, tool_calls: reply.toolCalls });
    let returned: Record<string, unknown> | undefined;
    for (const call of reply.toolCalls) {
      const entry = ctx.palette.byName.get(call.name);
      ctx.log.emit('tool_call_start', { tool: call.name, call_id: call.id, input: call.input, turn });
      const outcome = await runCall(ctx, call, entry, returned !== undefined, messages);
      timing.tools_ms += outcome.dispatchMs;
      if (outcome.returned) returned = outcome.returned;
      ctx.log.emit('tool_call_result', {
        call_id: call.id,
        output: outcome.content,
        ...(outcome.isError ? { error: outcome.content } : {}),
        duration_ms: outcome.durationMs,
        turn,
      });
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: outcome.content,
        ...(outcome.isError ? { is_error: true } : {}),
      });
    }
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
}

async function afterStep(ctx: LoopContext, cost: ThreadCost): Promise<void> {
  await ctx.hooks.control('after_step', { cost: { ...cost }, thread_id: ctx.threadId }).catch(() => null);
  ctx.onCostSnapshot({ ...cost });
}

async function callModel(
  ctx: LoopContext,
  messages: readonly ChatMessage[],
): Promise<{ response: ModelResponse } | { error: ProviderCallErrorInfo; partial: ModelResponse }> {
  const partial: ModelResponse = {
    text: '',
    reasoning: '',
    toolCalls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    finishReason: '',
  };
  const tools = ctx.palette.entries.map(({ name, description, schema }) => ({ name, description, schema }));
  for await (const part of ctx.model.stream({
    model: ctx.model.modelId,
    system: ctx.system,
    messages,
    tools,
    maxTokens: ctx.maxTokens,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })) {
    switch (part.type) {
      case 'text-delta':
        partial.text += part.text;
        break;
      case 'reasoning-delta':
        partial.reasoning += part.text;
        break;
      case 'tool-call':
        partial.toolCalls.push(part.call);
        break;
      case 'usage':
        if (part.usage.inputTokens !== undefined) partial.usage.inputTokens = part.usage.inputTokens;
        if (part.usage.outputTokens !== undefined) partial.usage.outputTokens = part.usage.outputTokens;
        break;
      case 'finish':
        partial.finishReason = part.reason;
        return { response: partial };
      case 'error':
        return { error: part.error, partial };
    }
  }
  return {
    error: {
      providerId: ctx.model.providerId,
      message: 'The model stream ended without a finish',
      httpStatus: 0,
      errorClass: 'ConnectionError',
      retryable: true,
    },
    partial,
  };
}

interface CallOutcome {
  content: string;
  isError: boolean;
  durationMs: number;
  /** Time spent in the dispatched operation (the tool itself), not in the runner. */
  dispatchMs: number;
  returned?: Record<string, unknown>;
}

function missingOutputs(
  outputs: readonly OutputSpec[] | undefined,
  values: Record<string, unknown>,
): string[] {
  return (outputs ?? [])
    .filter((o) => o.required)
    .map((o) => o.name)
    .filter((name) => {
      const v = values[name];
      return v === undefined || v === null || v === '' || v === false;
    });
}

async function runCall(
  ctx: LoopContext,
  call: ToolCall,
  entry: PaletteEntry | undefined,
  alreadyReturned: boolean,
  messages: ChatMessage[],
): Promise<CallOutcome> {
  const started = performance.now();
  let dispatchMs = 0;
  const done = (content: unknown, isError: boolean, returned?: Record<string, unknown>): CallOutcome => ({
    content: typeof content === 'string' ? content : JSON.stringify(content),
    isError,
    durationMs: Math.round(performance.now() - started),
    dispatchMs,
    ...(returned ? { returned } : {}),
  });
  if (!entry) {
    return done(
      { error: `Unknown tool '${call.name}'. Use one of: ${[...ctx.palette.byName.keys()].join(', ')}` },
      true,
    );
  }
  if ('_raw' in call.input && Object.keys(call.input).length === 1) {
    return done(
      { error: `The arguments of ${call.name} were not valid JSON. Call it again with a JSON object.` },
      true,
    );
  }
  const denial = ctx.permission.check(call, entry);
  if (denial) return done(denial, true);

  if (isDirectiveReturn(call, entry)) {
    if (alreadyReturned)
      return done({ status: 'success', note: 'Outputs were already returned in this turn.' }, false);
    const values =
      entry.kind === 'primary' && isMap(call.input.parameters) ? call.input.parameters : call.input;
    if (values.status === 'error') {
      const returned = { ...values };
      return done({ status: 'success', returned: true }, false, returned);
    }
    const missing = missingOutputs(ctx.outputs, values);
    if (missing.length) {
      return done(
        {
          error: `Missing required output fields: ${missing.join(', ')}. Call directive_return again with all required fields.`,
        },
        true,
      );
    }
    return done({ status: 'success', returned: true }, false, { ...values });
  }

  if (entry.itemId === READ_ARTIFACT_ID) {
    const ref = typeof call.input.artifact_ref === 'string' ? call.input.artifact_ref : '';
    const read = ctx.guard.read(ref, Number(call.input.offset ?? 0), Number(call.input.length ?? 8000));
    return done(read, read.status === 'error');
  }

  const dispatchedAt = performance.now();
  const envelope = await ctx.dispatch(primaryCallOf(call, entry, ctx.threadId, ctx.signal));
  dispatchMs = performance.now() - dispatchedAt;
  const itemId = executedItem(call, entry) ?? entry.itemId;
  const cleaned = cleanResult(itemId, envelope);
  const ratio = textOfMessages(messages) / 4 / ctx.contextWindow;
  const guarded = await ctx.guard.guard(call.id, cleaned, ratio);
  return done(guarded.content, envelope.status === 'error');
}
