/**
 * What one model request may cost: its `max_tokens` is capped by what the thread's remaining
 * budget can pay for at the model's output price, after an upper bound of the request's input
 * cost; a request the budget cannot pay for is not sent. So a hostile (or verbose) model cannot
 * spend past its budget within one response.
 *
 * The input bound counts UTF-8 bytes: byte-level BPE tokenizers (Anthropic's and OpenAI's) never
 * make more tokens than bytes, whatever the text (code, CJK, random data). Bytes overcount
 * ordinary text about fourfold, so after the first response the bound is calibrated: the input
 * tokens the provider reported for the previous request, plus the bytes added since.
 */
import type { ChatMessage, ToolDefinition } from '../provider/types.js';

/** Below this many output tokens a response is not worth sending (it could hardly say anything). */
export const MIN_OUTPUT_TOKENS = 256;
/** Tokens a provider adds around each message and tool definition (roles, separators, names). */
const PER_ITEM_TOKENS = 8;
/** Tokens a provider adds to a request that offers tools (Anthropic's tool-use preamble is ~350). */
const TOOLS_PREAMBLE_TOKENS = 1024;

function messageBytes(m: ChatMessage): number {
  let bytes = Buffer.byteLength(m.content, 'utf8') + PER_ITEM_TOKENS;
  if (m.role === 'assistant' && m.tool_calls?.length)
    bytes += Buffer.byteLength(JSON.stringify(m.tool_calls));
  if (m.role === 'tool') bytes += Buffer.byteLength(m.tool_call_id);
  return bytes;
}

/** The fixed part of every request of a thread: its system prompt and the tools it offers. */
export function fixedRequestBytes(system: string, tools: readonly ToolDefinition[]): number {
  let bytes = Buffer.byteLength(system, 'utf8') + (tools.length ? TOOLS_PREAMBLE_TOKENS : 0);
  for (const tool of tools) {
    bytes += PER_ITEM_TOKENS + Buffer.byteLength(tool.name) + Buffer.byteLength(tool.description);
    bytes += Buffer.byteLength(JSON.stringify(tool.schema));
  }
  return bytes;
}

/** An upper bound of a thread's next request's input tokens, calibrated by its last response. */
export class InputTokenBound {
  #calibration: { bytes: number; tokens: number } | undefined;
  #lastBytes = 0;

  constructor(private readonly fixedBytes: number) {}

  /** The bound for a request of `messages`; remembered for `calibrate`. */
  of(messages: readonly ChatMessage[]): number {
    let bytes = this.fixedBytes;
    for (const m of messages) bytes += messageBytes(m);
    this.#lastBytes = bytes;
    if (!this.#calibration) return bytes;
    // What was added since the calibrated request (never less than nothing: a conversation may shrink).
    return this.#calibration.tokens + Math.max(0, bytes - this.#calibration.bytes);
  }

  /** The provider's count of the last request's input tokens (`of`'s last request). */
  calibrate(inputTokens: number): void {
    if (inputTokens > 0) this.#calibration = { bytes: this.#lastBytes, tokens: inputTokens };
  }
}

export type OutputCap =
  | { maxTokens: number }
  /** The budget cannot pay for the request and the least useful answer: `leastCost` is what they would cost. */
  | { refused: true; leastCost: number };

/** Prices in USD per million tokens, as in a provider's `pricing`. */
export function capOutputTokens(options: {
  remainingSpend: number;
  pricing?: { input?: number; output?: number };
  inputTokens: number;
  maxTokens: number;
}): OutputCap {
  const { remainingSpend, pricing, inputTokens, maxTokens } = options;
  const inputCost = (inputTokens * (pricing?.input ?? 0)) / 1e6;
  const perOutputToken = (pricing?.output ?? 0) / 1e6;
  const least = Math.min(MIN_OUTPUT_TOKENS, maxTokens);
  if (perOutputToken <= 0) {
    // An unpriced model (warned about at setup) is capped by nothing but its input price.
    return inputCost <= remainingSpend ? { maxTokens } : { refused: true, leastCost: inputCost };
  }
  const affordable = Math.floor((remainingSpend - inputCost) / perOutputToken);
  if (!(affordable >= least)) return { refused: true, leastCost: inputCost + least * perOutputToken };
  return { maxTokens: Math.min(maxTokens, affordable) };
}
