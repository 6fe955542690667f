/**
 * The Anthropic Messages API as the replay server speaks it: the same event sequence, field names
 * and error bodies as api.anthropic.com, so a client tested here works there.
 */
import { chunks, type ErrorReply, type PlannedTurn, type StreamPlan } from './plan.js';
import type { ReplayHttpError, ReplayStreamError } from './script.js';

/** Anthropic's error type for each status it documents. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function frame(data: Record<string, unknown>): string {
  return `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
}

function modelOf(body: unknown): string {
  const model = (body as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : 'replay-model';
}

export function anthropicStream(plan: PlannedTurn, body: unknown): StreamPlan {
  const frames: string[] = [
    frame({
      type: 'message_start',
      message: {
        id: `msg_replay_${plan.number}`,
        type: 'message',
        role: 'assistant',
        model: modelOf(body),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Like the real API: output_tokens here is a small running figure, not to be added to the final one.
        usage: { input_tokens: plan.usage.input_tokens, output_tokens: 1 },
      },
    }),
    frame({ type: 'ping' }),
  ];
  let index = 0;
  if (plan.thinking !== '') {
    frames.push(
      frame({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } }),
    );
    for (const piece of chunks(plan.thinking, plan.chunkSize)) {
      frames.push(
        frame({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } }),
      );
    }
    frames.push(
      frame({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: `replay-signature-${plan.number}` },
      }),
    );
    frames.push(frame({ type: 'content_block_stop', index }));
    index++;
  }
  if (plan.text !== '' || (plan.calls.length === 0 && plan.thinking === '')) {
    frames.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    for (const piece of chunks(plan.text, plan.chunkSize)) {
      frames.push(frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }));
    }
    frames.push(frame({ type: 'content_block_stop', index }));
    index++;
  }
  for (const call of plan.calls) {
    if (call.textBefore !== '') {
      frames.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      for (const piece of chunks(call.textBefore, plan.chunkSize)) {
        frames.push(
          frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }),
        );
      }
      frames.push(frame({ type: 'content_block_stop', index }));
      index++;
    }
    frames.push(
      frame({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    // The real API opens with an empty partial_json; clients must cope with it.
    for (const piece of ['', ...chunks(call.json, plan.chunkSize)]) {
      frames.push(
        frame({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      );
    }
    frames.push(frame({ type: 'content_block_stop', index }));
    index++;
  }
  const closingAt = frames.length;
  frames.push(
    frame({
      type: 'message_delta',
      delta: { stop_reason: plan.stopReason, stop_sequence: null },
      usage: { output_tokens: plan.usage.output_tokens },
    }),
  );
  frames.push(frame({ type: 'message_stop' }));
  return { frames, closingAt };
}

export function anthropicMessage(plan: PlannedTurn, body: unknown): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (plan.thinking !== '') {
    content.push({ type: 'thinking', thinking: plan.thinking, signature: `replay-signature-${plan.number}` });
  }
  if (plan.text !== '' || plan.calls.length === 0) content.push({ type: 'text', text: plan.text });
  for (const call of plan.calls) {
    if (call.textBefore !== '') content.push({ type: 'text', text: call.textBefore });
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: call.input ?? { _raw: call.json },
    });
  }
  return {
    id: `msg_replay_${plan.number}`,
    type: 'message',
    role: 'assistant',
    model: modelOf(body),
    content,
    stop_reason: plan.stopReason,
    stop_sequence: null,
    usage: { input_tokens: plan.usage.input_tokens, output_tokens: plan.usage.output_tokens },
  };
}

export function anthropicStreamError(error: ReplayStreamError): string {
  const type = error.type ?? 'overloaded_error';
  return frame({ type: 'error', error: { type, message: error.message ?? 'Overloaded' } });
}

export function anthropicError(error: ReplayHttpError, requestId: string): ErrorReply {
  const type =
    error.type ??
    TYPE_BY_STATUS[error.status] ??
    (error.status >= 500 ? 'api_error' : 'invalid_request_error');
  const headers: Record<string, string> = { 'request-id': requestId };
  if (error.retry_after !== undefined) headers['retry-after'] = String(error.retry_after);
  return {
    status: error.status,
    headers,
    body: {
      type: 'error',
      error: { type, message: error.message ?? `Replayed ${type} (HTTP ${error.status})` },
    },
  };
}
