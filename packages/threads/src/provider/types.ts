/**
 * The provider contract (design card: written the way `@ai-sdk/provider` writes its own): what
 * the runner sends a model and the stream of parts it gets back. Adapters for each wire format
 * (Anthropic Messages, OpenAI Chat Completions) produce exactly these shapes; the runner consumes
 * them with a `switch` and never sees a wire format.
 */
/** A complete tool call: its input JSON has been parsed (a parse failure keeps `{_raw}`). */
export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The runner's conversation, provider-neutral (spec threads §8.2). */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string; is_error?: boolean };

/** A tool offered to the model. `name` is the API name (`rye_file_system_read`). */
export interface ToolDefinition {
  name: string;
  description: string;
  /** A JSON Schema object (`{type:'object', properties, required}`). */
  schema: Record<string, unknown>;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelRequest {
  /** The provider's model id (already resolved from tiers). */
  model: string;
  /** Sent the way the provider wants it (a body field for Anthropic, a `system` message for OpenAI). */
  system: string;
  messages: readonly ChatMessage[];
  tools: readonly ToolDefinition[];
  maxTokens: number;
  signal?: AbortSignal;
  /**
   * Receives every raw SSE `data` payload as it arrives (the optional stream sinks: a file, a
   * WebSocket). Called before the payload is assembled; must not throw or block.
   */
  onData?: (data: string) => void;
  /** Called once the request has been handed to the network (before any answer); must not throw. */
  onSent?: () => void;
}

/**
 * What a model stream yields, in order. `tool-call` is emitted when a call is complete (its block
 * closed, or the stream moved past it), so a consumer may start it at once. `usage` may come more
 * than once; the last value of each field wins (both providers report cumulative figures).
 * A stream ends with exactly one `finish` or one `error`.
 */
export type StreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'usage'; usage: Partial<TokenUsage> }
  | { type: 'finish'; reason: string }
  | { type: 'error'; error: ProviderCallErrorInfo };

/** A whole response, as assembled from the parts. */
export interface ModelResponse {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  usage: TokenUsage;
  finishReason: string;
}

/** The fields of a failed provider call (spec threads §8.3, §5.7), as data. */
export interface ProviderCallErrorInfo {
  providerId: string;
  message: string;
  /** 0 when no HTTP response arrived (connection refused, reset, timeout). */
  httpStatus: number;
  /** The error class for classification: `ProviderCallError`, `TimeoutError`, `ConnectionError`, `CancelledError`. */
  errorClass: string;
  /** The provider's own code or type (`overloaded_error`, `rate_limit_error`, `insufficient_quota`). */
  code?: string;
  requestId?: string;
  /** Seconds from a `retry-after` header. */
  retryAfterSeconds?: number;
  retryable: boolean;
  /** What the person who started the thread can do about it, when the reply says (a model not found). */
  hint?: string;
}

/** One model of one provider, ready to call. */
export interface LanguageModel {
  readonly providerId: string;
  readonly modelId: string;
  /** Never throws: transport and HTTP failures arrive as an `error` part. */
  stream(request: ModelRequest): AsyncIterable<StreamPart>;
}
