/**
 * OpenAI Chat Completions (and compatible gateways), spec threads §8.2, §8.3: request bodies
 * with the system prompt as the first message, SSE assembly of tool calls by index, usage via
 * `stream_options.include_usage`, and whole responses.
 */
import { randomUUID } from 'node:crypto';
import { streamErrorInfo } from './errors.js';
import type { HttpProviderConfig } from './http-config.js';
import { createHttpModel } from './http-model.js';
import { tokenCount } from './token-count.js';
import { definedOnly, parseToolInput } from './tool-input.js';
import type {
  ChatMessage,
  LanguageModel,
  ModelRequest,
  ProviderCallErrorInfo,
  StreamPart,
  TokenUsage,
  ToolCall,
} from './types.js';
import {
  type AssemblerContext,
  badPayloadInfo,
  cutShortInfo,
  type StreamAssembler,
  type WireFormat,
} from './wire.js';

/** o-series reasoning models reject `max_tokens` (spec threads §8.1). */
const O_SERIES = /^(o1|o3|o4)(\b|[-_.]|$)/;

export function maxTokensFieldFor(model: string): 'max_tokens' | 'max_completion_tokens' {
  return O_SERIES.test(model) ? 'max_completion_tokens' : 'max_tokens';
}

/** Runner messages → OpenAI messages, the system prompt first (never a top-level field). */
export function toOpenAIMessages(
  system: string,
  messages: readonly ChatMessage[],
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = system === '' ? [] : [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'tool') {
      out.push({ role: 'tool', tool_call_id: message.tool_call_id, content: message.content });
    } else if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.tool_calls && message.tool_calls.length > 0) {
      out.push({
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.tool_calls.map((call) => ({
          type: 'function',
          id: call.id,
          function: { name: call.name, arguments: JSON.stringify(call.input) },
        })),
      });
    } else {
      out.push({ role: 'assistant', content: message.content });
    }
  }
  return out;
}

export function buildOpenAIBody(request: ModelRequest, config: HttpProviderConfig): Record<string, unknown> {
  const field = config.maxTokensField ?? maxTokensFieldFor(request.model);
  const extra: Record<string, unknown> = { ...config.extraBody };
  // Only one of the two limits may be sent.
  delete extra[field === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens'];
  const streamOptions = extra['stream_options'];
  return definedOnly({
    ...extra,
    model: request.model,
    [field]: request.maxTokens,
    messages: toOpenAIMessages(request.system, request.messages),
    tools:
      request.tools.length === 0
        ? undefined
        : request.tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.schema },
          })),
    stream: config.stream,
    // Without include_usage a stream reports no usage at all, and spend would stay 0 (§8.1 [BUG]).
    stream_options: config.stream
      ? {
          ...(typeof streamOptions === 'object' && streamOptions !== null ? streamOptions : {}),
          include_usage: true,
        }
      : undefined,
  });
}

function usageFrom(value: unknown): Partial<TokenUsage> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { prompt_tokens: input, completion_tokens: output } = value as Record<string, unknown>;
  const usage: Partial<TokenUsage> = {};
  const inputTokens = tokenCount(input);
  const outputTokens = tokenCount(output);
  if (inputTokens !== undefined) usage.inputTokens = inputTokens;
  if (outputTokens !== undefined) usage.outputTokens = outputTokens;
  return usage.inputTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}

/** Reasoning text from compatible servers (`reasoning_content`, `reasoning`); OpenAI sends none. */
function reasoningOf(value: Record<string, unknown>): string | undefined {
  const text = value['reasoning_content'] ?? value['reasoning'];
  return typeof text === 'string' && text !== '' ? text : undefined;
}

function newCallId(): string {
  return `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

interface OpenCall {
  id: string;
  name: string;
  args: string;
}

/**
 * SSE chunks → parts. Tool calls accumulate by index; call i is yielded when a higher index
 * appears or at `finish_reason`. `[DONE]` ends the stream (after the usage chunk, if any).
 */
export class OpenAIStreamAssembler implements StreamAssembler {
  private readonly calls = new Map<number, OpenCall>();
  private lastIndex = -1;
  private finishReason: string | undefined;
  done = false;

  constructor(private readonly context: AssemblerContext) {}

  push(data: string): StreamPart[] {
    if (this.done) return [];
    if (data === '[DONE]') {
      this.done = true;
      return [
        ...this.closeCalls(Number.POSITIVE_INFINITY),
        { type: 'finish', reason: this.finishReason ?? 'stop' },
      ];
    }
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      this.done = true;
      return [{ type: 'error', error: badPayloadInfo(this.context, data) }];
    }
    if (typeof chunk !== 'object' || chunk === null) return [];
    if (chunk['error'] !== undefined && chunk['error'] !== null) {
      this.done = true;
      return [
        { type: 'error', error: streamErrorInfo(this.context.providerId, chunk, this.context.requestId) },
      ];
    }
    const parts: StreamPart[] = [];
    const choices = Array.isArray(chunk['choices']) ? (chunk['choices'] as Record<string, unknown>[]) : [];
    for (const choice of choices) {
      // Only the first choice is used (n = 1).
      if ((choice['index'] ?? 0) !== 0) continue;
      const delta = (choice['delta'] ?? {}) as Record<string, unknown>;
      const reasoning = reasoningOf(delta);
      if (reasoning !== undefined) parts.push({ type: 'reasoning-delta', text: reasoning });
      if (typeof delta['content'] === 'string' && delta['content'] !== '') {
        parts.push({ type: 'text-delta', text: delta['content'] });
      }
      if (Array.isArray(delta['tool_calls'])) {
        for (const raw of delta['tool_calls'] as Record<string, unknown>[])
          parts.push(...this.addCallDelta(raw));
      }
      if (typeof choice['finish_reason'] === 'string') {
        this.finishReason = choice['finish_reason'];
        parts.push(...this.closeCalls(Number.POSITIVE_INFINITY));
      }
    }
    const usage = usageFrom(chunk['usage']);
    if (usage) parts.push({ type: 'usage', usage });
    return parts;
  }

  private addCallDelta(raw: Record<string, unknown>): StreamPart[] {
    const fn = (raw['function'] ?? {}) as Record<string, unknown>;
    const id = typeof raw['id'] === 'string' && raw['id'] !== '' ? raw['id'] : undefined;
    let index: number;
    if (typeof raw['index'] === 'number') index = raw['index'];
    else if (id !== undefined && this.calls.get(this.lastIndex)?.id !== id) index = this.lastIndex + 1;
    else index = Math.max(this.lastIndex, 0);
    // A higher index means every lower call is complete.
    const parts = this.closeCalls(index);
    let call = this.calls.get(index);
    if (!call) {
      call = { id: '', name: '', args: '' };
      this.calls.set(index, call);
    }
    if (index > this.lastIndex) this.lastIndex = index;
    if (id !== undefined) call.id = id;
    if (typeof fn['name'] === 'string' && fn['name'] !== '') call.name = fn['name'];
    if (typeof fn['arguments'] === 'string') call.args += fn['arguments'];
    return parts;
  }

  /** Yields (in index order) every open call below `limit`. */
  private closeCalls(limit: number): StreamPart[] {
    const ready = [...this.calls.keys()].filter((i) => i < limit).sort((a, b) => a - b);
    return ready.map((i) => {
      const call = this.calls.get(i)!;
      this.calls.delete(i);
      return {
        type: 'tool-call',
        call: { id: call.id || newCallId(), name: call.name, input: parseToolInput(call.args) },
      };
    });
  }

  end(): StreamPart[] {
    if (this.done) return [];
    this.done = true;
    // Some compatible servers end after finish_reason without [DONE]; nothing is missing then.
    if (this.finishReason !== undefined) return [{ type: 'finish', reason: this.finishReason }];
    return [{ type: 'error', error: cutShortInfo(this.context, 'finish_reason and [DONE]') }];
  }
}

function callFromWhole(raw: Record<string, unknown>): ToolCall {
  const fn = (raw['function'] ?? {}) as Record<string, unknown>;
  const args = fn['arguments'];
  return {
    id: typeof raw['id'] === 'string' && raw['id'] !== '' ? raw['id'] : newCallId(),
    name: String(fn['name'] ?? ''),
    input:
      typeof args === 'object' && args !== null && !Array.isArray(args)
        ? (args as Record<string, unknown>)
        : parseToolInput(typeof args === 'string' ? args : ''),
  };
}

/** A whole `/chat/completions` response → parts. */
export function parseOpenAICompletion(
  body: unknown,
  context: AssemblerContext,
): StreamPart[] | ProviderCallErrorInfo {
  const completion = (body ?? {}) as Record<string, unknown>;
  if (completion['error'] !== undefined && completion['error'] !== null) {
    return streamErrorInfo(context.providerId, completion, context.requestId);
  }
  const choice = Array.isArray(completion['choices'])
    ? (completion['choices'] as Record<string, unknown>[])[0]
    : undefined;
  const message = choice?.['message'];
  if (typeof message !== 'object' || message === null) {
    const info: ProviderCallErrorInfo = {
      providerId: context.providerId,
      message: `Provider ${context.providerId} answered without choices[0].message; is the url a /v1/chat/completions endpoint?`,
      httpStatus: 200,
      errorClass: 'ProviderCallError',
      retryable: false,
    };
    if (context.requestId !== undefined) info.requestId = context.requestId;
    return info;
  }
  const m = message as Record<string, unknown>;
  const parts: StreamPart[] = [];
  const reasoning = reasoningOf(m);
  if (reasoning !== undefined) parts.push({ type: 'reasoning-delta', text: reasoning });
  if (typeof m['content'] === 'string' && m['content'] !== '')
    parts.push({ type: 'text-delta', text: m['content'] });
  if (Array.isArray(m['tool_calls'])) {
    for (const raw of m['tool_calls'] as Record<string, unknown>[])
      parts.push({ type: 'tool-call', call: callFromWhole(raw) });
  }
  const usage = usageFrom(completion['usage']);
  if (usage) parts.push({ type: 'usage', usage });
  const reason = choice?.['finish_reason'];
  parts.push({ type: 'finish', reason: typeof reason === 'string' ? reason : 'stop' });
  return parts;
}

export const openaiWire: WireFormat = {
  defaultHeaders: {},
  buildBody: buildOpenAIBody,
  createAssembler: (context) => new OpenAIStreamAssembler(context),
  parseWhole: parseOpenAICompletion,
};

/** A `LanguageModel` over OpenAI Chat Completions. Throws `RyeError('CONFIG')` for an unusable config. */
export function createOpenAIModel(config: HttpProviderConfig): LanguageModel {
  return createHttpModel(config, openaiWire);
}
