/**
 * The server's HTTP plumbing: bodies read up to a byte limit (counted on the wire and again
 * after gunzip, so a small compressed bomb is stopped at the limit), JSON answers gzip-encoded
 * when the client accepts it, and every failure as one `RemoteErrorBody`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import { isRyeError, RyeError, type RyeErrorCode } from '@ryeos/lillux';
import type { RemoteErrorBody } from 'ryeos';
import type { InflightBytes } from './inflight-bytes.js';

const gunzip = promisify(gunzipCallback);
const gzip = promisify(gzipCallback);

/** Below this, gzip costs more than it saves. */
const GZIP_FROM_BYTES = 1024;

const STATUS_OF_CODE: Partial<Record<RyeErrorCode, number>> = {
  VALIDATION: 400,
  INTEGRITY: 400,
  NOT_FOUND: 404,
  PERMISSION: 401,
  LIMIT: 413,
  CONFIG: 400,
  UNAVAILABLE: 503,
};

/** An answer whose status is not 200 although nothing failed (a put that refused some entries). */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
  ) {}
}

/** A RyeError that names the HTTP status it answers with. */
export function httpError(
  status: number,
  code: RyeErrorCode,
  message: string,
  hint?: string,
  details: Record<string, unknown> = {},
): RyeError {
  return new RyeError(code, message, {
    ...(hint ? { hint } : {}),
    details: { ...details, http_status: status },
  });
}

export function statusOf(error: RyeError): number {
  const named = error.details.http_status;
  return typeof named === 'number' ? named : (STATUS_OF_CODE[error.code] ?? 500);
}

function tooLarge(limit: number): RyeError {
  return httpError(
    413,
    'LIMIT',
    `The request body is over this server's limit of ${limit} bytes (after decompression)`,
    'Send fewer objects per request, or ask the operator to raise --max-request-bytes.',
  );
}

function tooBusy(): RyeError {
  return httpError(
    503,
    'UNAVAILABLE',
    'The server holds as many request bytes as it allows right now',
    'Retry in a moment (see Retry-After); an operator can raise --max-inflight-bytes.',
    { retry_after_seconds: 1 },
  );
}

/**
 * The raw bytes of a body, up to `limit`, each counted against the server-wide `inflight` budget
 * while it is read. Over either, reading stops (the stream is paused, not destroyed, so the
 * refusal can still be sent; the connection is closed after it).
 */
function readRaw(req: IncomingMessage, limit: number, inflight: InflightBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    const stop = (error?: Error) => {
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      inflight.give(held);
      held = 0;
      if (error) reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        stop(tooLarge(limit));
      } else if (!inflight.take(chunk.length)) {
        req.pause();
        stop(tooBusy());
      } else {
        held += chunk.length;
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    // A client that goes away mid-body gives its bytes back.
    const onClose = () => stop(httpError(400, 'VALIDATION', 'The client closed the request mid-body'));
    // The error listener is kept for good: a client that drops later must not crash the server.
    req
      .on('data', onData)
      .on('end', onEnd)
      .on('close', onClose)
      .on('error', (error) => stop(error));
  });
}

/** Reads a request body: never more than `limit` bytes off the wire, nor after gunzip. */
export async function readBody(
  req: IncomingMessage,
  limit: number,
  inflight: InflightBytes,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const raw = await readRaw(req, limit, inflight);
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return raw;
  if (encoding !== 'gzip') {
    throw httpError(
      415,
      'VALIDATION',
      `Unsupported Content-Encoding '${encoding}'`,
      'Send the body plain or gzip.',
    );
  }
  try {
    return await gunzip(raw, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit);
    throw httpError(
      400,
      'VALIDATION',
      'The gzip request body cannot be decompressed',
      'Send valid gzip, or a plain body.',
    );
  }
}

/** Parses a JSON object body; anything else is a 400 with a plain reason. */
export async function readJsonObject(
  req: IncomingMessage,
  limit: number,
  inflight: InflightBytes,
): Promise<Record<string, unknown>> {
  const body = await readBody(req, limit, inflight);
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw httpError(400, 'VALIDATION', 'The request body is not valid JSON', 'Send a JSON object.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw httpError(400, 'VALIDATION', 'The request body must be a JSON object', 'Send a JSON object.');
  }
  return value as Record<string, unknown>;
}

export async function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown) {
  let payload: Buffer = Buffer.from(JSON.stringify(body), 'utf8');
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8' };
  if (payload.length >= GZIP_FROM_BYTES && /\bgzip\b/i.test(String(req.headers['accept-encoding'] ?? ''))) {
    payload = await gzip(payload);
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = payload.length;
  headers.vary = 'Accept-Encoding';
  res.writeHead(status, headers);
  res.end(payload);
}

/** The error answer of anything thrown: a RyeError keeps its message; anything else is hidden. */
export function errorAnswer(error: unknown): {
  status: number;
  body: RemoteErrorBody;
  retryAfterSeconds?: number;
} {
  if (isRyeError(error) && error.code !== 'INTERNAL') {
    const retryAfter = error.details.retry_after_seconds;
    return {
      status: statusOf(error),
      ...(typeof retryAfter === 'number' ? { retryAfterSeconds: retryAfter } : {}),
      body: {
        status: 'error',
        error: error.message,
        ...(error.hint ? { hint: error.hint } : {}),
        error_type: error.code.toLowerCase(),
      },
    };
  }
  return {
    status: 500,
    body: {
      status: 'error',
      error: 'The server failed to handle this request',
      hint: "See the server's log; retry once it is fixed.",
      error_type: 'internal',
    },
  };
}
