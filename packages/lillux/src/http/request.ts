/**
 * `httpRequest`: one request with per-attempt timeouts and retries. Bad options throw
 * `RyeError('VALIDATION')`; every network or HTTP failure is reported in the result.
 */

import { monotonicMs } from '../clock.js';
import { RyeError } from '../errors.js';
import { type BackoffPolicy, isRetryableStatus, retryDelay, sleep } from './retry.js';
import type { HttpMethod, HttpRequestOptions, HttpResult } from './types.js';

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'];

/** Options checked and filled with defaults. */
export interface PreparedRequest extends BackoffPolicy {
  url: string;
  method: HttpMethod;
  headers: Headers;
  body: string | Uint8Array | undefined;
  timeoutMs: number;
  retries: number;
  signal: AbortSignal | undefined;
}

export function invalid(message: string, hint: string, details: Record<string, unknown> = {}): RyeError {
  return new RyeError('VALIDATION', message, { hint, details });
}

export function checkNumber(
  name: string,
  value: unknown,
  fallback: number,
  opts: { min: number; integer?: boolean },
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < opts.min ||
    (opts.integer && !Number.isInteger(value))
  ) {
    const kind = opts.integer ? 'an integer' : 'a finite number';
    throw invalid(
      `http: ${name} must be ${kind} >= ${opts.min}, got ${String(value)}`,
      `Pass ${name} as ${kind} >= ${opts.min}, or leave it out for the default (${fallback}).`,
      { [name]: value },
    );
  }
  return value;
}

/** Validates options and applies defaults. Throws `RyeError('VALIDATION')` saying what to fix. */
export function prepareRequest(options: HttpRequestOptions): PreparedRequest {
  if (typeof options !== 'object' || options === null) {
    throw invalid('http: options must be an object with at least a url', 'Call it as httpRequest({ url }).');
  }
  const { url } = options;
  if (typeof url !== 'string' || url === '') {
    throw invalid('http: url is required and must be a string', 'Pass an absolute http(s) URL as `url`.', {
      url,
    });
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(
      `http: url is not a valid absolute URL: ${url}`,
      'Use a full URL such as https://host/path.',
      {
        url,
      },
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(
      `http: url must use http: or https:, got ${parsed.protocol}`,
      'Only http and https URLs are supported.',
      { url },
    );
  }

  const rawMethod = options.method ?? 'GET';
  const method = (typeof rawMethod === 'string' ? rawMethod.toUpperCase() : rawMethod) as HttpMethod;
  if (!METHODS.includes(method)) {
    throw invalid(`http: unknown method ${String(rawMethod)}`, `Use one of ${METHODS.join(', ')}.`, {
      method: rawMethod,
    });
  }

  let headers: Headers;
  try {
    if (options.headers !== undefined && (typeof options.headers !== 'object' || options.headers === null)) {
      throw new TypeError('headers must be an object of name → string value');
    }
    headers = new Headers(options.headers);
  } catch (error) {
    throw invalid(
      `http: invalid headers: ${(error as Error).message}`,
      'Header names must be tokens and values strings without newlines.',
    );
  }

  let body: string | Uint8Array | undefined;
  if (options.body !== undefined && method !== 'GET' && method !== 'HEAD') {
    const value = options.body;
    if (typeof value === 'string') {
      body = value;
      if (!headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    } else if (value instanceof Uint8Array) {
      body = value;
    } else {
      let text: string | undefined;
      try {
        text = JSON.stringify(value);
      } catch (error) {
        throw invalid(
          `http: body could not be serialised as JSON: ${(error as Error).message}`,
          'Pass a string, a Uint8Array, or a JSON-serialisable value (no cycles, no BigInt).',
        );
      }
      if (text === undefined) {
        throw invalid(
          `http: body of type ${typeof value} cannot be sent`,
          'Pass a string, a Uint8Array, or a JSON-serialisable value.',
        );
      }
      body = text;
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }

  const backoff = options.backoff ?? 'exponential';
  if (backoff !== 'exponential' && backoff !== 'linear') {
    throw invalid(`http: unknown backoff ${String(backoff)}`, "Use 'exponential' or 'linear'.", { backoff });
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw invalid('http: signal must be an AbortSignal', 'Pass AbortController.signal or leave it out.');
  }

  return {
    url,
    method,
    headers,
    body,
    timeoutMs: checkNumber('timeoutMs', options.timeoutMs, 30_000, { min: 1 }),
    retries: checkNumber('retries', options.retries, 0, { min: 0, integer: true }),
    backoff,
    baseDelayMs: checkNumber('baseDelayMs', options.baseDelayMs, 1000, { min: 0 }),
    maxRetryDelayMs: checkNumber('maxRetryDelayMs', options.maxRetryDelayMs, 30_000, { min: 0 }),
    signal: options.signal,
  };
}

export const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_REDIRECTS = 5;
/** Headers that may follow a redirect to another origin; credentials never do. */
const CROSS_ORIGIN_SAFE = new Set(['accept', 'accept-language', 'content-type', 'user-agent']);

/**
 * fetch with redirects followed by hand: like a browser, a hop to another origin drops every
 * header but a few harmless ones, so an API key or bearer token never reaches a host it was not
 * meant for (fetch itself only strips `Authorization`). 303, and 301/302 after a POST, turn
 * into a GET without a body.
 */
async function fetchFollowingRedirects(url: string, init: RequestInit): Promise<Response> {
  let current = new URL(url);
  let hop: RequestInit = init;
  for (let redirects = 0; ; redirects++) {
    const res = await fetch(current, hop);
    const location = res.headers.get('location');
    if (
      res.status < 300 ||
      res.status >= 400 ||
      res.status === 304 ||
      !location ||
      redirects >= MAX_REDIRECTS
    )
      return res;
    await res.body?.cancel().catch(() => undefined);
    const next = new URL(location, current);
    const headers = new Headers(hop.headers);
    if (next.origin !== current.origin) {
      for (const name of [...headers.keys()]) if (!CROSS_ORIGIN_SAFE.has(name)) headers.delete(name);
    }
    const toGet = res.status === 303 || ((res.status === 301 || res.status === 302) && hop.method === 'POST');
    hop = { ...hop, headers, ...(toGet ? { method: 'GET', body: undefined } : {}) };
    if (toGet) headers.delete('content-type');
    current = next;
  }
}

/**
 * The deadline of one attempt, combined with the caller's signal. `refresh()` restarts it (the
 * stream uses that as an idle timeout); `clear()` must be called when the attempt ends.
 */
export class AttemptTimer {
  readonly signal: AbortSignal;
  timedOut = false;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly timeoutMs: number,
    caller: AbortSignal | undefined,
  ) {
    // setTimeout overflows above 2^31-1 ms and would fire at once: cap it (≈ 24.8 days).
    this.timer = setTimeout(
      () => {
        this.timedOut = true;
        this.controller.abort(new DOMException(`Timed out after ${timeoutMs} ms`, 'TimeoutError'));
      },
      Math.min(timeoutMs, MAX_TIMER_MS),
    );
    this.signal = caller ? AbortSignal.any([this.controller.signal, caller]) : this.controller.signal;
  }

  refresh(): void {
    this.timer.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** The innermost useful message of a fetch failure (`fetch failed` hides the socket error in `cause`). */
export function describeError(error: unknown): string {
  let current: unknown = error;
  let message = '';
  for (let depth = 0; depth < 8 && current != null; depth++) {
    if (current instanceof AggregateError && current.errors.length > 0) {
      const parts = current.errors.map((e) => describeError(e));
      return [...new Set(parts)].join('; ');
    }
    if (current instanceof Error || typeof current === 'object') {
      const e = current as { message?: unknown; code?: unknown; cause?: unknown };
      const text = typeof e.message === 'string' ? e.message : '';
      if (text !== '') {
        const code = typeof e.code === 'string' ? e.code : '';
        message = code !== '' && !text.includes(code) ? `${text} (${code})` : text;
      }
      current = e.cause;
    } else {
      message = String(current);
      break;
    }
  }
  return message || 'unknown error';
}

export function callerAbortText(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message !== '') {
    return `Aborted by caller: ${reason.message}`;
  }
  if (typeof reason === 'string' && reason !== '') return `Aborted by caller: ${reason}`;
  return 'Aborted by caller';
}

/** `HTTP 404: Not Found`. */
export function httpErrorText(res: Response): string {
  return res.statusText ? `HTTP ${res.status}: ${res.statusText}` : `HTTP ${res.status}`;
}

/** Lower-case names; repeated headers (set-cookie) joined with `, `. */
export function headersRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (name === '__proto__') continue;
    const prev = out[name];
    out[name] = prev === undefined ? value : `${prev}, ${value}`;
  }
  return out;
}

/** The parsed body when it is JSON, else `undefined`. */
export function parseJson(body: string): unknown {
  if (body === '') return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

export type AttemptOutcome<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; error: string; attempts: number };

/**
 * Runs attempts until `handle` settles on a response. 429/5xx responses and network errors (refused,
 * reset, timeout) retry with backoff; the last 429/5xx is handed to `handle` like any other response.
 * `handle` owns the timer on success (it must clear it); errors it throws count as network errors.
 */
export async function withRetries<T>(
  req: PreparedRequest,
  handle: (res: Response, timer: AttemptTimer) => Promise<T>,
): Promise<AttemptOutcome<T>> {
  const caller = req.signal;
  const init: RequestInit = { method: req.method, headers: req.headers, redirect: 'manual' };
  if (req.body !== undefined) init.body = req.body;
  let attempt = 0;
  for (;;) {
    attempt++;
    if (caller?.aborted) return { ok: false, error: callerAbortText(caller), attempts: attempt - 1 };
    const timer = new AttemptTimer(req.timeoutMs, caller);
    let retryAfter: string | null = null;
    try {
      init.signal = timer.signal;
      const res = await fetchFollowingRedirects(req.url, init);
      if (isRetryableStatus(res.status) && attempt <= req.retries) {
        retryAfter = res.headers.get('retry-after');
        await res.body?.cancel().catch(() => undefined);
        timer.clear();
      } else {
        return { ok: true, value: await handle(res, timer), attempts: attempt };
      }
    } catch (error) {
      timer.clear();
      if (caller?.aborted) return { ok: false, error: callerAbortText(caller), attempts: attempt };
      const cause = timer.timedOut ? `Timed out after ${req.timeoutMs} ms` : describeError(error);
      if (attempt > req.retries) {
        const noun = attempt === 1 ? 'attempt' : 'attempts';
        return { ok: false, error: `Request failed after ${attempt} ${noun}: ${cause}`, attempts: attempt };
      }
    }
    // `retry-after` (429/503) when the server sent one, else the backoff; both capped.
    if (!(await sleep(retryDelay(attempt - 1, retryAfter, req), caller)) && caller) {
      return { ok: false, error: callerAbortText(caller), attempts: attempt };
    }
  }
}

/** One HTTP request with retries; never throws for network or HTTP failures. */
export async function httpRequest(options: HttpRequestOptions): Promise<HttpResult> {
  const req = prepareRequest(options);
  const started = monotonicMs();
  const outcome = await withRetries(req, async (res, timer) => {
    try {
      return { res, ...(await readBody(res, options.maxBodyBytes)) };
    } finally {
      timer.clear();
    }
  });
  const duration_ms = Math.round(monotonicMs() - started);
  if (!outcome.ok) {
    return {
      success: false,
      status: 0,
      headers: {},
      body: '',
      duration_ms,
      attempts: outcome.attempts,
      error: outcome.error,
    };
  }
  const { res, body, truncated } = outcome.value;
  const result: HttpResult = {
    success: res.status >= 200 && res.status < 400,
    status: res.status,
    headers: headersRecord(res.headers),
    body,
    duration_ms,
    attempts: outcome.attempts,
  };
  const json = truncated ? undefined : parseJson(body);
  if (json !== undefined) result.json = json;
  if (truncated) result.truncated = true;
  if (res.status >= 400) result.error = httpErrorText(res);
  return result;
}

/** Reads a body as text, stopping (and cancelling the rest) after `limit` bytes. */
async function readBody(
  res: Response,
  limit = Number.POSITIVE_INFINITY,
): Promise<{ body: string; truncated: boolean }> {
  if (!Number.isFinite(limit) || !res.body) return { body: await res.text(), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > limit) {
      chunks.push(value.subarray(0, limit - size));
      await reader.cancel().catch(() => undefined);
      return { body: Buffer.concat(chunks).toString('utf8'), truncated: true };
    }
    chunks.push(value);
    size += value.length;
  }
  return { body: Buffer.concat(chunks).toString('utf8'), truncated: false };
}
