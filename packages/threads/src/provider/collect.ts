/**
 * Gathers a model stream into one response, for callers that do not act on parts as they arrive
 * (batch mode, tests).
 */
import type { ModelResponse, ProviderCallErrorInfo, StreamPart } from './types.js';

export type CollectedResponse =
  | { response: ModelResponse }
  | { error: ProviderCallErrorInfo; partial: ModelResponse };

/**
 * Reads parts up to the `finish` or `error` that ends the stream. `usage` keeps the last value of
 * each field. On error, `partial` holds what arrived before it (completed tool calls included).
 */
export async function collectResponse(
  parts: AsyncIterable<StreamPart>,
  providerId = 'unknown',
): Promise<CollectedResponse> {
  const response: ModelResponse = {
    text: '',
    reasoning: '',
    toolCalls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    finishReason: '',
  };
  for await (const part of parts) {
    switch (part.type) {
      case 'text-delta':
        response.text += part.text;
        break;
      case 'reasoning-delta':
        response.reasoning += part.text;
        break;
      case 'tool-call':
        response.toolCalls.push(part.call);
        break;
      case 'usage':
        if (part.usage.inputTokens !== undefined) response.usage.inputTokens = part.usage.inputTokens;
        if (part.usage.outputTokens !== undefined) response.usage.outputTokens = part.usage.outputTokens;
        break;
      case 'finish':
        response.finishReason = part.reason;
        return { response };
      case 'error':
        response.finishReason = 'error';
        return { error: part.error, partial: response };
    }
  }
  response.finishReason = 'error';
  return {
    error: {
      providerId,
      message: 'The model stream ended without a finish or error part',
      httpStatus: 0,
      errorClass: 'ConnectionError',
      retryable: true,
    },
    partial: response,
  };
}
