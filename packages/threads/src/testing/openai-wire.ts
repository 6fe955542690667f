/**
 * OpenAI Chat Completions as the replay server speaks it. Like the real API, a stream carries
 * usage only when the request asked for it (`stream_options.include_usage`), so a client that
 * forgets to ask sees no usage here either. Thinking is sent as `reasoning_content`, the field
 * OpenAI-compatible reasoning models use (OpenAI itself does not stream reasoning).
 */
import { chunks, type ErrorReply, type PlannedTurn, type StreamPlan } from './plan.js';
import type { ReplayHttpError, ReplayStreamError } from './script.js';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  503: 'server_error',
};

const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
};

function finishReason(plan: PlannedTurn): string {
  return FINISH_REASONS[plan.stopReason] ?? plan.stopReason;
}

function modelOf(body: unknown): string {
  const model = (body as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : 'replay-model';
}

/** Whether the request asked for the usage chunk at the end of a stream. */
export function wantsStreamUsage(body: unknown): boolean {
  const options = (body as { stream_options?: { include_usage?: unknown } } | null)?.stream_options;
  return options?.include_usage === true;
}

function usageOf(plan: PlannedTurn): Record<string, number> {
  const { input_tokens: prompt, output_tokens: completion } = plan.usage;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function openaiStream(plan: PlannedTurn, body: unknown): StreamPlan {
  const includeUsage = wantsStreamUsage(body);
  const base = {
    id: `chatcmpl-replay-${plan.number}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: modelOf(body),
  };
  const frame = (delta: Record<string, unknown>, finish: string | null = null): string => {
    const chunk: Record<string, unknown> = {
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    // With include_usage every chunk carries `usage: null` until the last one.
    if (includeUsage) chunk['usage'] = null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  };
  const frames = [frame({ role: 'assistant', content: '' })];
  for (const piece of chunks(plan.thinking, plan.chunkSize)) frames.push(frame({ reasoning_content: piece }));
  for (const piece of chunks(plan.text, plan.chunkSize)) frames.push(frame({ content: piece }));
  plan.calls.forEach((call, index) => {
    for (const piece of chunks(call.textBefore, plan.chunkSize)) frames.push(frame({ content: piece }));
    frames.push(
      frame({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of chunks(call.json, plan.chunkSize)) {
      frames.push(frame({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  const closingAt = frames.length;
  frames.push(frame({}, finishReason(plan)));
  if (includeUsage) {
    frames.push(`data: ${JSON.stringify({ ...base, choices: [], usage: usageOf(plan) })}\n\n`);
  }
  frames.push('data: [DONE]\n\n');
  return { frames, closingAt };
}

/** A whole message has one content string: the turn's text and the text before each call. */
function allText(plan: PlannedTurn): string {
  return plan.text + plan.calls.map((call) => call.textBefore).join('');
}

export function openaiCompletion(plan: PlannedTurn, body: unknown): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: allText(plan) === '' && plan.calls.length > 0 ? null : allText(plan),
    refusal: null,
  };
  if (plan.thinking !== '') message['reasoning_content'] = plan.thinking;
  if (plan.calls.length > 0) {
    message['tool_calls'] = plan.calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.json },
    }));
  }
  return {
    id: `chatcmpl-replay-${plan.number}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: modelOf(body),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
    usage: usageOf(plan),
  };
}

function errorBody(type: string, code: string | null, message: string): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

export function openaiStreamError(error: ReplayStreamError): string {
  const type = error.type ?? 'server_error';
  return `data: ${JSON.stringify(errorBody(type, type, error.message ?? 'The server had an error while processing your request.'))}\n\n`;
}

export function openaiError(error: ReplayHttpError, requestId: string): ErrorReply {
  const type =
    error.type ??
    TYPE_BY_STATUS[error.status] ??
    (error.status >= 500 ? 'server_error' : 'invalid_request_error');
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (error.retry_after !== undefined) headers['retry-after'] = String(error.retry_after);
  return {
    status: error.status,
    headers,
    body: errorBody(type, error.code ?? type, error.message ?? `Replayed ${type} (HTTP ${error.status})`),
  };
}
