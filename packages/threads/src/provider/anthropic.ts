/**
 * The Anthropic Messages API (spec threads §8.2, §8.3): request bodies, SSE assembly keyed by
 * content-block index, and whole responses.
 */
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
} from './types.js';
import {
  type AssemblerContext,
  badPayloadInfo,
  cutShortInfo,
  type StreamAssembler,
  type WireFormat,
} from './wire.js';

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

/** A user message made only of tool results, which further results may join. */
function isToolResultMessage(
  message: AnthropicMessage | undefined,
): message is { role: 'user'; content: Block[] } {
  return (
    message?.role === 'user' &&
    Array.isArray(message.content) &&
    message.content.every((block) => block['type'] === 'tool_result')
  );
}

/**
 * Runner messages → Anthropic messages: consecutive tool results become one user message of
 * `tool_result` blocks (a user message right after them joins it as a text block), and an
 * assistant turn with calls becomes text + `tool_use` blocks.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    const last = out[out.length - 1];
    if (message.role === 'tool') {
      const block: Block = {
        type: 'tool_result',
        tool_use_id: message.tool_call_id,
        content: message.content,
      };
      if (message.is_error) block['is_error'] = true;
      if (isToolResultMessage(last)) last.content.push(block);
      else out.push({ role: 'user', content: [block] });
    } else if (message.role === 'user') {
      if (isToolResultMessage(last)) {
        if (message.content !== '') last.content.push({ type: 'text', text: message.content });
      } else {
        out.push({ role: 'user', content: message.content });
      }
    } else if (message.tool_calls && message.tool_calls.length > 0) {
      const content: Block[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
      for (const call of message.tool_calls) {
        content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
      }
      out.push({ role: 'assistant', content });
    } else if (message.content !== '') {
      // An empty assistant turn is rejected by the API; dropping it lets the user turns around it merge.
      out.push({ role: 'assistant', content: message.content });
    }
  }
  return out;
}

export function buildAnthropicBody(
  request: ModelRequest,
  config: HttpProviderConfig,
): Record<string, unknown> {
  return definedOnly({
    ...config.extraBody,
    model: request.model,
    max_tokens: request.maxTokens,
    system: request.system === '' ? undefined : request.system,
    messages: toAnthropicMessages(request.messages),
    tools:
      request.tools.length === 0
        ? undefined
        : request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.schema,
          })),
    stream: config.stream,
  });
}

function usageFrom(value: unknown): Partial<TokenUsage> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { input_tokens: input, output_tokens: output } = value as Record<string, unknown>;
  const usage: Partial<TokenUsage> = {};
  const inputTokens = tokenCount(input);
  const outputTokens = tokenCount(output);
  if (inputTokens !== undefined) usage.inputTokens = inputTokens;
  if (outputTokens !== undefined) usage.outputTokens = outputTokens;
  return usage.inputTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}

interface OpenToolBlock {
  id: string;
  name: string;
  json: string;
  /** `content_block_start`'s input, used when no deltas came. */
  initial: Record<string, unknown>;
}

/**
 * SSE events → parts. A tool call is yielded at its `content_block_stop`; usage comes from
 * `message_start` (input) and the last `message_delta` (cumulative output, never added to
 * message_start's); `message_stop` ends the stream.
 */
export class AnthropicStreamAssembler implements StreamAssembler {
  private readonly tools = new Map<number, OpenToolBlock>();
  private stopReason: string | undefined;
  done = false;

  constructor(private readonly context: AssemblerContext) {}

  push(data: string): StreamPart[] {
    if (this.done) return [];
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(data) as Record<string, unknown>;
    } catch {
      this.done = true;
      return [{ type: 'error', error: badPayloadInfo(this.context, data) }];
    }
    if (typeof event !== 'object' || event === null) return [];
    const index = typeof event['index'] === 'number' ? event['index'] : -1;
    switch (event['type']) {
      case 'message_start': {
        const usage = usageFrom((event['message'] as { usage?: unknown } | undefined)?.usage);
        return usage ? [{ type: 'usage', usage }] : [];
      }
      case 'content_block_start': {
        const block = (event['content_block'] ?? {}) as Record<string, unknown>;
        if (block['type'] === 'tool_use') {
          const input = block['input'];
          this.tools.set(index, {
            id: String(block['id'] ?? ''),
            name: String(block['name'] ?? ''),
            json: '',
            initial: typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {},
          });
        } else if (block['type'] === 'text' && typeof block['text'] === 'string' && block['text'] !== '') {
          return [{ type: 'text-delta', text: block['text'] }];
        } else if (
          block['type'] === 'thinking' &&
          typeof block['thinking'] === 'string' &&
          block['thinking'] !== ''
        ) {
          return [{ type: 'reasoning-delta', text: block['thinking'] }];
        }
        return [];
      }
      case 'content_block_delta': {
        const delta = (event['delta'] ?? {}) as Record<string, unknown>;
        if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string' && delta['text'] !== '') {
          return [{ type: 'text-delta', text: delta['text'] }];
        }
        if (
          delta['type'] === 'thinking_delta' &&
          typeof delta['thinking'] === 'string' &&
          delta['thinking'] !== ''
        ) {
          return [{ type: 'reasoning-delta', text: delta['thinking'] }];
        }
        if (delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string') {
          const tool = this.tools.get(index);
          if (tool) tool.json += delta['partial_json'];
        }
        return [];
      }
      case 'content_block_stop':
        return this.closeTool(index);
      case 'message_delta': {
        const reason = (event['delta'] as { stop_reason?: unknown } | undefined)?.stop_reason;
        if (typeof reason === 'string') this.stopReason = reason;
        const usage = usageFrom(event['usage']);
        return usage ? [{ type: 'usage', usage }] : [];
      }
      case 'message_stop': {
        this.done = true;
        const open = [...this.tools.keys()].sort((a, b) => a - b).flatMap((i) => this.closeTool(i));
        return [...open, { type: 'finish', reason: this.stopReason ?? 'end_turn' }];
      }
      case 'error':
        this.done = true;
        return [
          { type: 'error', error: streamErrorInfo(this.context.providerId, event, this.context.requestId) },
        ];
      default:
        // ping and event types added later.
        return [];
    }
  }

  private closeTool(index: number): StreamPart[] {
    const tool = this.tools.get(index);
    if (!tool) return [];
    this.tools.delete(index);
    const input = tool.json === '' ? tool.initial : parseToolInput(tool.json);
    return [{ type: 'tool-call', call: { id: tool.id, name: tool.name, input } }];
  }

  end(): StreamPart[] {
    if (this.done) return [];
    this.done = true;
    // A message_delta carries the stop reason: only message_stop is missing, nothing of the content.
    if (this.stopReason !== undefined && this.tools.size === 0)
      return [{ type: 'finish', reason: this.stopReason }];
    return [{ type: 'error', error: cutShortInfo(this.context, 'message_stop') }];
  }
}

/** A whole `/v1/messages` response → parts. */
export function parseAnthropicMessage(
  body: unknown,
  context: AssemblerContext,
): StreamPart[] | ProviderCallErrorInfo {
  const message = (body ?? {}) as Record<string, unknown>;
  if (message['type'] === 'error') return streamErrorInfo(context.providerId, message, context.requestId);
  if (!Array.isArray(message['content'])) {
    return {
      providerId: context.providerId,
      message: `Provider ${context.providerId} answered without a content list; is the url an Anthropic /v1/messages endpoint?`,
      httpStatus: 200,
      errorClass: 'ProviderCallError',
      retryable: false,
      ...(context.requestId === undefined ? {} : { requestId: context.requestId }),
    };
  }
  const parts: StreamPart[] = [];
  for (const block of message['content'] as Record<string, unknown>[]) {
    if (block['type'] === 'text' && typeof block['text'] === 'string' && block['text'] !== '') {
      parts.push({ type: 'text-delta', text: block['text'] });
    } else if (
      block['type'] === 'thinking' &&
      typeof block['thinking'] === 'string' &&
      block['thinking'] !== ''
    ) {
      parts.push({ type: 'reasoning-delta', text: block['thinking'] });
    } else if (block['type'] === 'tool_use') {
      const input = block['input'];
      parts.push({
        type: 'tool-call',
        call: {
          id: String(block['id'] ?? ''),
          name: String(block['name'] ?? ''),
          input:
            typeof input === 'object' && input !== null && !Array.isArray(input)
              ? (input as Record<string, unknown>)
              : parseToolInput(typeof input === 'string' ? input : JSON.stringify(input ?? {})),
        },
      });
    }
  }
  const usage = usageFrom(message['usage']);
  if (usage) parts.push({ type: 'usage', usage });
  const reason = message['stop_reason'];
  parts.push({ type: 'finish', reason: typeof reason === 'string' ? reason : 'end_turn' });
  return parts;
}

export const anthropicWire: WireFormat = {
  defaultHeaders: { 'anthropic-version': '2023-06-01' },
  buildBody: buildAnthropicBody,
  createAssembler: (context) => new AnthropicStreamAssembler(context),
  parseWhole: parseAnthropicMessage,
};

/** A `LanguageModel` over the Anthropic Messages API. Throws `RyeError('CONFIG')` for an unusable config. */
export function createAnthropicModel(config: HttpProviderConfig): LanguageModel {
  return createHttpModel(config, anthropicWire);
}
