/**
 * Public types of the `http` primitive: one-shot requests (`httpRequest`) and SSE streams
 * fanned out to sinks (`httpStream`).
 */

import type { EventSink, SinkError, SseEvent } from './events.js';
import type { ReturnSink } from './sinks.js';

export type { EventSink, SinkError, SseEvent };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';

export interface HttpRequestOptions {
  url: string;
  /** Default `GET`. */
  method?: HttpMethod;
  headers?: Record<string, string>;
  /**
   * A string is sent as-is (`text/plain` unless a content-type is given), a `Uint8Array` as-is,
   * anything else as JSON (`application/json`). Never sent for GET/HEAD.
   */
  body?: unknown;
  /**
   * Per attempt, default 30 000. For `httpRequest` it bounds the whole attempt (headers and body);
   * for `httpStream` it bounds the wait for the response headers and then every gap between chunks.
   */
  timeoutMs?: number;
  /** Extra attempts after the first, default 0. */
  retries?: number;
  /** Default `exponential`: delay before retry n (0-based) = baseDelayMs * 2^n; `linear` = baseDelayMs. */
  backoff?: 'exponential' | 'linear';
  /** Default 1000. */
  baseDelayMs?: number;
  /** Cap on any retry delay, `retry-after` included. Default 30 000. */
  maxRetryDelayMs?: number;
  signal?: AbortSignal;
  /** Bytes of the response body kept; the rest is not read and `truncated` is set. Default: no limit. */
  maxBodyBytes?: number;
}

export interface HttpResult {
  /** `200 <= status < 400`. */
  success: boolean;
  /** 0 when no response arrived. */
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** Present when the body parses as JSON. */
  json?: unknown;
  duration_ms: number;
  attempts: number;
  /** `HTTP 404: Not Found`, `Request failed after 3 attempts: <cause>`, `Aborted by caller`. */
  error?: string;
  /** Set when the body went over `maxBodyBytes` (it was cut there, and not parsed as JSON). */
  truncated?: boolean;
}

export interface HttpStreamOptions extends HttpRequestOptions {
  /** Extra destinations; each gets its own queue, so a slow or failing sink never stalls the stream. */
  sinks?: EventSink[];
  /** Collects the events returned in the result; a default `ReturnSink` is created when omitted. */
  returnSink?: ReturnSink;
  /** How long the end of the stream waits for the sinks to drain and close. Default 2000. */
  sinkCloseTimeoutMs?: number;
}

export interface HttpStreamResult extends Omit<HttpResult, 'body' | 'json'> {
  /** What the return sink collected. */
  events: SseEvent[];
  /** Every event parsed, whether or not the return sink kept it. */
  stream_events_count: number;
  /** Sink names, the return sink first. */
  stream_destinations: string[];
  sink_errors: SinkError[];
  /** Only for a non-2xx response, which is read whole instead of streamed. */
  body?: string;
  json?: unknown;
  /** e.g. `Stream broke after 12 events: <cause>`. */
  error?: string;
}
