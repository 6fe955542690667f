/**
 * Failed provider calls as `ProviderCallErrorInfo` (spec threads §8.3, §5.7): HTTP error bodies,
 * in-stream error events and transport failures, with the fields the error classifier reads.
 */
import { clipText } from '@ryeos/lillux';
import type { ProviderCallErrorInfo } from './types.js';

/** Statuses worth another attempt (§8.3; 504 added, §5.7 counts it transient). 0 = no response. */
const RETRYABLE_STATUSES = new Set([0, 429, 500, 502, 503, 504, 529]);
/** Codes that mean the account is out of money: retrying cannot help. */
const QUOTA_CODES = new Set(['insufficient_quota', 'quota_exceeded', 'billing_hard_limit_reached']);

export function isRetryable(status: number, code: string | undefined): boolean {
  return RETRYABLE_STATUSES.has(status) && !(code !== undefined && QUOTA_CODES.has(code));
}

/** `retry-after` in seconds: delta-seconds or an HTTP-date; `undefined` when absent or unreadable. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What is read of a response's headers (a fetch `Headers` is one). */
export interface HeaderReader {
  get(name: string): string | null;
}

export function requestIdOf(headers: HeaderReader): string | undefined {
  return headers.get('request-id') ?? headers.get('x-request-id') ?? undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

/** The provider's own message and code from an error body (`{error:{message, code|type}}`, or a bare string). */
export function errorBodyFields(body: unknown): { message?: string; code?: string } {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error === 'string' && error !== '') return { message: error };
  const out: { message?: string; code?: string } = {};
  const message = stringField(error, 'message') ?? stringField(body, 'message');
  const code = stringField(error, 'code') ?? stringField(error, 'type');
  if (message !== undefined) out.message = message;
  if (code !== undefined) out.code = code;
  return out;
}

/**
 * The hint for a reply that says the model does not exist or is not this key's to use: Anthropic's
 * 404 `not_found_error` ("model: …"), OpenAI's `model_not_found`, and a compatible server's 404
 * that names the model (Ollama's "model … not found"). A 404 that does not is a wrong URL instead.
 */
export function modelNotFoundHint(
  status: number,
  code: string | undefined,
  message: string | undefined,
): string | undefined {
  const named =
    code === 'model_not_found' ||
    ((status === 404 || code === 'not_found_error') && /\bmodel\b/i.test(message ?? ''));
  return named
    ? "The provider does not serve this model. Pass one it serves as the thread's model, or map the tier to one under tier_mapping in .ai/config/agent/agent.yaml (then sign config:agent/agent again)."
    : undefined;
}

function withOptional(
  info: ProviderCallErrorInfo,
  fields: {
    code?: string | undefined;
    requestId?: string | undefined;
    retryAfterSeconds?: number | undefined;
    hint?: string | undefined;
  },
): ProviderCallErrorInfo {
  if (fields.code !== undefined) info.code = fields.code;
  if (fields.hint !== undefined) info.hint = fields.hint;
  if (fields.requestId !== undefined) info.requestId = fields.requestId;
  if (fields.retryAfterSeconds !== undefined) info.retryAfterSeconds = fields.retryAfterSeconds;
  return info;
}

/** A non-2xx response. `bodyText` is what was read of the body. */
export function httpErrorInfo(
  providerId: string,
  status: number,
  headers: HeaderReader,
  bodyText: string,
): ProviderCallErrorInfo {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const fields = errorBodyFields(body);
  let message = fields.message;
  if (message === undefined) {
    const snippet = clipText(bodyText.trim(), 300);
    message = snippet === '' ? `HTTP ${status}` : `HTTP ${status}: ${snippet}`;
  }
  if (status >= 300 && status < 400) {
    const location = headers.get('location');
    message = `The provider answered HTTP ${status}${location ? ` (redirect to ${location})` : ''}; set the provider url to the final endpoint (credentials are never sent on to a redirect).`;
  }
  return withOptional(
    {
      providerId,
      message,
      httpStatus: status,
      errorClass: 'ProviderCallError',
      retryable: isRetryable(status, fields.code),
    },
    {
      code: fields.code,
      requestId: requestIdOf(headers),
      retryAfterSeconds: parseRetryAfter(headers.get('retry-after')),
      hint: modelNotFoundHint(status, fields.code, fields.message),
    },
  );
}

/**
 * The HTTP status an in-stream error type stands for (the response itself was a 200), so an
 * `overloaded_error` event is classified like a 529 response. Unknown types count as a server error.
 */
const STATUS_BY_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  api_error: 500,
  server_error: 500,
  overloaded_error: 529,
};

/** An error event inside a 200 stream (Anthropic `event: error`, OpenAI `data: {"error":…}`). */
export function streamErrorInfo(
  providerId: string,
  body: unknown,
  requestId: string | undefined,
): ProviderCallErrorInfo {
  const fields = errorBodyFields(body);
  const type = stringField((body as { error?: unknown }).error, 'type');
  const status = STATUS_BY_ERROR_TYPE[fields.code ?? ''] ?? STATUS_BY_ERROR_TYPE[type ?? ''] ?? 500;
  return withOptional(
    {
      providerId,
      message: fields.message ?? `The provider sent an error event: ${clipText(JSON.stringify(body), 300)}`,
      httpStatus: status,
      errorClass: 'ProviderCallError',
      retryable: isRetryable(status, fields.code),
    },
    { code: fields.code, requestId, hint: modelNotFoundHint(status, fields.code, fields.message) },
  );
}

export type TransportFailure = 'connection' | 'timeout' | 'cancelled';

const ERROR_CLASSES: Record<TransportFailure, string> = {
  connection: 'ConnectionError',
  timeout: 'TimeoutError',
  cancelled: 'CancelledError',
};

/** No usable response: refused, reset, timed out, or cancelled by the caller. */
export function transportErrorInfo(
  providerId: string,
  kind: TransportFailure,
  message: string,
  requestId?: string,
): ProviderCallErrorInfo {
  return withOptional(
    { providerId, message, httpStatus: 0, errorClass: ERROR_CLASSES[kind], retryable: kind !== 'cancelled' },
    { requestId },
  );
}

/** A response that arrived but cannot be read (not JSON, not the expected shape). */
export function malformedResponseInfo(
  providerId: string,
  status: number,
  message: string,
  requestId: string | undefined,
): ProviderCallErrorInfo {
  return withOptional(
    { providerId, message, httpStatus: status, errorClass: 'ProviderCallError', retryable: false },
    { requestId },
  );
}

/** The innermost useful message of a fetch failure (`fetch failed` hides the socket error in `cause`). */
export function describeError(error: unknown): string {
  let current: unknown = error;
  let message = '';
  for (let depth = 0; depth < 8 && current != null; depth++) {
    if (current instanceof AggregateError && current.errors.length > 0) {
      return [...new Set(current.errors.map((e) => describeError(e)))].join('; ');
    }
    if (typeof current !== 'object') {
      message = String(current);
      break;
    }
    const e = current as { message?: unknown; code?: unknown; cause?: unknown };
    if (typeof e.message === 'string' && e.message !== '') {
      const code = typeof e.code === 'string' ? e.code : '';
      message = code !== '' && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
    }
    current = e.cause;
  }
  return message || 'unknown error';
}
