/**
 * One scripted turn made concrete for a request: defaults applied, ids generated, usage
 * estimated where the script gave none. Both wire formats render from this.
 */
import type { ReplayScript, ReplayTurn } from './script.js';

export interface PlannedCall {
  id: string;
  name: string;
  /** The arguments as sent (JSON, or the script's `raw_input` verbatim). */
  json: string;
  /** Parsed arguments for the non-stream shapes; `undefined` when `raw_input` is not an object. */
  input: Record<string, unknown> | undefined;
  /** Text written just before the call (`''` when none). */
  textBefore: string;
}

export interface PlannedTurn {
  /** 1-based, across the whole script. */
  number: number;
  turn: ReplayTurn;
  text: string;
  thinking: string;
  calls: PlannedCall[];
  usage: { input_tokens: number; output_tokens: number };
  /** Anthropic terms (`end_turn`, `tool_use`, …). */
  stopReason: string;
  chunkDelayMs: number;
  chunkSize: number;
  holdBeforeFinalMs: number;
  delayMs: number;
}

const DEFAULT_CHUNK_SIZE = 12;

function parsedObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The tool results a request carries, as text (Anthropic `tool_result` blocks, OpenAI `tool` messages). */
function toolResultTexts(body: unknown): string[] {
  const messages = (body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) return [];
  const out: string[] = [];
  for (const message of messages as Array<Record<string, unknown>>) {
    if (message['role'] === 'tool' && typeof message['content'] === 'string') out.push(message['content']);
    if (!Array.isArray(message['content'])) continue;
    for (const block of message['content'] as Array<Record<string, unknown>>) {
      if (block['type'] === 'tool_result' && typeof block['content'] === 'string') out.push(block['content']);
    }
  }
  return out;
}

/** Every string value of `field` anywhere in the JSON tool results, in order, without repeats. */
function resultValues(body: unknown, field: string): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === field && typeof inner === 'string' && !found.includes(inner)) found.push(inner);
        else visit(inner);
      }
    }
  };
  for (const text of toolResultTexts(body)) {
    try {
      visit(JSON.parse(text));
    } catch {
      // Not JSON: nothing to take from it.
    }
  }
  return found;
}

/** `(characters / 4)` rounded up: a stand-in for a tokenizer, stable across runs. */
function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export function planTurn(
  script: ReplayScript,
  index: number,
  requestBody: unknown,
  idPrefix: 'toolu' | 'call',
): PlannedTurn {
  const turn = script.turns[index]!;
  const defaults = script.defaults ?? {};
  const number = index + 1;
  const calls = (turn.tool_calls ?? []).map((call, i) => {
    const from = call.input_from_results;
    let given = call.input;
    if (from) {
      const values = resultValues(requestBody, from.field);
      const pick = from.pick ?? 'all';
      given = {
        ...(call.input ?? {}),
        [from.key]: pick === 'all' ? values : pick === 'first' ? values[0] : values.at(-1),
      };
    }
    const json = call.raw_input ?? JSON.stringify(given ?? {});
    return {
      id: call.id ?? `${idPrefix}_replay_${number}_${i + 1}`,
      name: call.name,
      json,
      input: call.raw_input === undefined ? (given ?? {}) : parsedObject(call.raw_input),
      textBefore: call.text_before ?? '',
    };
  });
  const text = turn.text ?? '';
  const thinking = turn.thinking ?? '';
  const outputChars =
    text.length +
    thinking.length +
    calls.reduce((n, c) => n + c.textBefore.length + c.name.length + c.json.length, 0);
  return {
    number,
    turn,
    text,
    thinking,
    calls,
    usage: {
      input_tokens: turn.usage?.input_tokens ?? estimateTokens(JSON.stringify(requestBody ?? null).length),
      output_tokens: turn.usage?.output_tokens ?? Math.max(1, estimateTokens(outputChars)),
    },
    stopReason: turn.stop_reason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
    chunkDelayMs: turn.chunk_delay_ms ?? defaults.chunk_delay_ms ?? 0,
    chunkSize: turn.chunk_size ?? defaults.chunk_size ?? DEFAULT_CHUNK_SIZE,
    holdBeforeFinalMs: turn.hold_before_final_ms ?? defaults.hold_before_final_ms ?? 0,
    delayMs: turn.delay_ms ?? defaults.delay_ms ?? 0,
  };
}

/** Splits text into pieces of `size` characters (code points, so no surrogate pair is cut). */
export function chunks(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** What a streaming response is made of: the SSE frames in order, and where the closing ones start. */
export interface StreamPlan {
  frames: string[];
  /** Index of the first closing frame (after the content); a scripted `stream_error` goes here by default. */
  closingAt: number;
}

/** An HTTP error response. */
export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
