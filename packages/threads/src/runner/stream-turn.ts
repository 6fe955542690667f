/**
 * One model call of a thread with streaming inline tool execution (seed 002, spec threads §9,
 * DECISIONS 6): each tool call starts as soon as it is complete in the stream, while the model
 * is still writing.
 *
 * Transcript order (seed 002's guarantees): `cognition_out_delta` (droppable, coalesced) as text
 * arrives; `tool_call_start` for each call when it completes, in stream order; `tool_call_result`
 * when a call finishes, possibly before the stream ends; `cognition_out` with the full text after
 * the stream and every call have settled. A `directive_return` is held to the end of the turn.
 *
 * The conversation the runner keeps is made of exactly what the transcript records — the calls
 * in `tool_call_start` order, each followed by its result — so `reconstructMessages` rebuilds it
 * byte for byte. A stream that breaks keeps the calls that completed (they ran, and run only
 * once), records the partial text, and reports the error; the retry continues from there.
 *
 * `stream.mode: batch` assembles the whole response first and then runs its calls the same way,
 * for comparison.
 */
import type {
  ChatMessage,
  LanguageModel,
  ModelResponse,
  ProviderCallErrorInfo,
  ToolCall,
  ToolDefinition,
} from '../provider/types.js';
import type { TextToolParser, UnreadCall } from '../streaming/text-parser.js';
import { textModeMessages } from '../streaming/text-prompt.js';
import type { CallContext, CallOutcome } from './calls.js';
import type { DispatchSettings } from './dispatcher.js';
import type { ThreadSpans } from './thread-spans.js';
import { type SettledCall, TurnCalls } from './turn-calls.js';

export type StreamMode = 'inline' | 'batch';

/** A transcript as a turn writes it. */
export interface TurnLog {
  emit(eventType: string, payload: Record<string, unknown>): void;
}

export interface TurnRequest {
  model: LanguageModel;
  system: string;
  tools: readonly ToolDefinition[];
  /** Also the denominator of a broken stream's `completion_percentage`. */
  maxTokens: number;
  /** The conversation so far; the turn does not change it. */
  messages: readonly ChatMessage[];
  turn: number;
  mode: StreamMode;
  dispatch: DispatchSettings;
  log: TurnLog;
  /** The thread's trace spans: each call runs inside its own. */
  spans?: ThreadSpans;
  /** For `tool_use.mode: text_parsed`: a fresh parser of calls written into the text. */
  textParser?: () => TextToolParser;
  /** Every raw SSE payload, for the optional sinks. */
  onData?: (data: string) => void;
  /** Calls one response may make (streaming.yaml `max_tool_calls_per_turn`); the rest are refused. */
  maxCallsPerTurn?: number;
  /** Why no further call may start (cancelled, out of time), checked as each call is about to run. */
  stopReason?: () => string | undefined;
  /**
   * Call ids the thread has used so far (shared across turns, updated here). A call whose id is
   * empty or already used gets a fresh one: results are matched to calls by id, in the provider's
   * next request and in the transcript, so an id must name one call.
   */
  usedIds?: Set<string>;
  /** Resolves once the thread's last checkpoint is on disk: a call waits for it before it runs. */
  durable?: () => Promise<void>;
  signal?: AbortSignal;
}

export type { SettledCall };

export interface TurnResult {
  /** The assembled response (text, reasoning, calls in stream order, usage); partial on error. */
  response: ModelResponse;
  /** The calls that were recorded, in `tool_call_start` order, with their results. */
  calls: SettledCall[];
  /** The outputs of a valid directive_return of this turn. */
  returned?: Record<string, unknown>;
  /** Set when the stream failed (after recording what completed). */
  error?: ProviderCallErrorInfo;
  /** Milliseconds from a call's completion in the stream to its start, per call run. */
  startDelaysMs: number[];
  /** Milliseconds the turn waited for calls after the stream ended. */
  toolsAfterStreamMs: number;
}

function emptyResponse(): ModelResponse {
  return {
    text: '',
    reasoning: '',
    toolCalls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    finishReason: '',
  };
}

function cutShort(model: LanguageModel): ProviderCallErrorInfo {
  return {
    providerId: model.providerId,
    message: 'The model stream ended without a finish',
    httpStatus: 0,
    errorClass: 'ConnectionError',
    retryable: true,
  };
}

/** Stands for the tool of an unreadable call that did not get as far as naming one. */
const UNNAMED_CALL = 'unreadable_tool_call';

/**
 * A call written into the text that could not be read, as a call the model sees with its error:
 * the excerpt stands in for its input, so the model can tell which call failed and fix it.
 */
function unreadCall(unread: UnreadCall): ToolCall {
  // The parser leaves out a name too long to be a tool's, so it is never repeated.
  const name = unread.name ?? UNNAMED_CALL;
  return { id: 'unread_call', name, input: { unreadable_call: unread.excerpt } };
}

function unreadOutcome(message: string): CallOutcome {
  return {
    content: JSON.stringify({
      error: `Your tool call could not be read (${message}), so it was not run. Write it again in the tool_use form the system prompt shows, with a new id and one JSON object as its input, closed before your answer ends.`,
    }),
    isError: true,
    durationMs: 0,
    dispatchMs: 0,
  };
}

/** Runs one model call and the tool calls it makes; never throws. */
export async function streamTurn(ctx: CallContext, request: TurnRequest): Promise<TurnResult> {
  const response = emptyResponse();
  const calls = new TurnCalls(ctx, request, response.toolCalls);
  const error = await readStream(request, response, calls);
  logUsage(request, response, error);
  // Batch mode: the response is whole; its calls run now, with the same checks and lanes.
  calls.startDeferred();
  const { settled, toolsAfterStreamMs } = await calls.settle();
  // The directive's return, after every other call of the turn has settled.
  const returned = calls.settleReturns(settled, error !== undefined);
  logAnswer(request, response, settled.length, error);
  return {
    response,
    calls: settled,
    ...(returned ? { returned } : {}),
    ...(error ? { error } : {}),
    startDelaysMs: calls.startDelaysMs,
    toolsAfterStreamMs,
  };
}

/**
 * Reads the model's stream into `response`, handing each complete call to `calls` as it arrives;
 * answers the stream's error, if it failed.
 */
async function readStream(
  request: TurnRequest,
  response: ModelResponse,
  calls: TurnCalls,
): Promise<ProviderCallErrorInfo | undefined> {
  const { log, turn } = request;
  const parser = request.textParser?.();
  let chunkIndex = 0;
  const onText = (text: string) => {
    if (text === '') return;
    response.text += text;
    log.emit('cognition_out_delta', { text, turn, chunk_index: chunkIndex++ });
  };
  const onTextParsed = (events: ReturnType<TextToolParser['feed']>) => {
    for (const event of events) {
      if (event.type === 'text') onText(event.text);
      else if (event.type === 'tool_complete') calls.accept(event.call);
      else {
        log.emit('tool_parse_error', { message: event.message, turn });
        // The model gets its unreadable call back with the error, or it would never know.
        if (event.call) calls.accept(unreadCall(event.call), unreadOutcome(event.message));
      }
    }
  };
  let error: ProviderCallErrorInfo | undefined;
  try {
    for await (const part of request.model.stream({
      model: request.model.modelId,
      system: request.system,
      messages: parser ? textModeMessages(request.messages) : request.messages,
      tools: request.tools,
      maxTokens: request.maxTokens,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.onData ? { onData: request.onData } : {}),
    })) {
      if (part.type === 'text-delta') {
        if (parser) onTextParsed(parser.feed(part.text));
        else onText(part.text);
      } else if (part.type === 'reasoning-delta') {
        response.reasoning += part.text;
        log.emit('cognition_reasoning', { text: part.text, turn });
      } else if (part.type === 'tool-call') {
        calls.accept(part.call);
      } else if (part.type === 'usage') {
        if (part.usage.inputTokens !== undefined) response.usage.inputTokens = part.usage.inputTokens;
        if (part.usage.outputTokens !== undefined) response.usage.outputTokens = part.usage.outputTokens;
      } else if (part.type === 'finish') {
        response.finishReason = part.reason;
        break;
      } else {
        error = part.error;
        break;
      }
    }
    if (!error && response.finishReason === '') error = cutShort(request.model);
    if (parser && !error) onTextParsed(parser.end());
  } catch (thrown) {
    // The contract says a model never throws; a defect still ends the turn as a failed call.
    error = { ...cutShort(request.model), message: `The model stream failed: ${(thrown as Error)?.message}` };
  }
  return error;
}

/**
 * What the response cost, on record before the turn waits on its calls: a run killed while a
 * call runs is resumed with this response paid for.
 */
function logUsage(
  request: TurnRequest,
  response: ModelResponse,
  error: ProviderCallErrorInfo | undefined,
): void {
  request.log.emit('response_usage', {
    turn: request.turn,
    input_tokens: response.usage.inputTokens,
    output_tokens: response.usage.outputTokens,
    ...(error ? { stream_error: true } : {}),
  });
}

/** `cognition_out` with the whole answer; a broken stream's is partial and says how far it got. */
function logAnswer(
  request: TurnRequest,
  response: ModelResponse,
  toolCount: number,
  error: ProviderCallErrorInfo | undefined,
): void {
  const { log, turn } = request;
  if (!error) {
    log.emit('cognition_out', {
      text: response.text,
      model: request.model.modelId,
      turn,
      tool_count: toolCount,
      is_partial: false,
    });
    return;
  }
  if (response.reasoning) {
    log.emit('cognition_reasoning', {
      text: response.reasoning,
      turn,
      is_partial: true,
      was_interrupted: true,
    });
  }
  log.emit('cognition_out', {
    text: response.text,
    model: request.model.modelId,
    turn,
    tool_count: toolCount,
    is_partial: true,
    truncated: true,
    error: error.message,
    ...(request.maxTokens > 0 && response.usage.outputTokens > 0
      ? {
          completion_percentage: Math.min(
            99,
            Math.round((response.usage.outputTokens / request.maxTokens) * 100),
          ),
        }
      : {}),
  });
}

/** The messages a turn adds to the conversation: the answer with its calls, then their results. */
export function turnMessages(result: TurnResult): ChatMessage[] {
  const assistant: ChatMessage = { role: 'assistant', content: result.response.text };
  if (result.calls.length) assistant.tool_calls = result.calls.map((c) => c.call);
  const out: ChatMessage[] = [assistant];
  for (const { call, outcome } of result.calls) {
    out.push({
      role: 'tool',
      tool_call_id: call.id,
      content: outcome.content,
      ...(outcome.isError ? { is_error: true } : {}),
    });
  }
  return out;
}
