/**
 * The part of an HTTP adapter that does not depend on the wire format: one attempt, parts yielded
 * as the body arrives, every failure turned into a final `error` part (never thrown).
 */

import { clipText } from '@ryeos/lillux';
import { httpErrorInfo, malformedResponseInfo } from './errors.js';
import { checkHttpProviderConfig, type HttpProviderConfig } from './http-config.js';
import { SseDataDecoder } from './sse.js';
import { CallFailure, HttpCall } from './transport.js';
import type { LanguageModel, ModelRequest, StreamPart } from './types.js';
import type { AssemblerContext, WireFormat } from './wire.js';

function headersFor(config: HttpProviderConfig, wire: WireFormat): Record<string, string> {
  const headers: Record<string, string> = {};
  const given = new Set(Object.keys(config.headers).map((name) => name.toLowerCase()));
  const defaults: Record<string, string> = {
    'content-type': 'application/json',
    accept: config.stream ? 'text/event-stream' : 'application/json',
    ...wire.defaultHeaders,
  };
  for (const [name, value] of Object.entries(defaults)) if (!given.has(name)) headers[name] = value;
  return { ...headers, ...config.headers };
}

/**
 * A response may not grow without end: past this many bytes of SSE the call fails (a model's
 * answer is bounded by max_tokens; a server that keeps sending is broken or hostile).
 */
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Hands a payload to the request's sinks; a sink's failure is never the call's. */
function tap(request: ModelRequest, data: string): void {
  if (!request.onData) return;
  try {
    request.onData(data);
  } catch {
    // Optional sinks never fail a turn (spec threads §9).
  }
}

/** Tells the request it went out; a failing listener is never the call's. */
function sent(request: ModelRequest): void {
  try {
    request.onSent?.();
  } catch {
    // Like the sinks, a listener of the request never fails a turn.
  }
}

async function* streamParts(
  config: HttpProviderConfig,
  wire: WireFormat,
  request: ModelRequest,
): AsyncGenerator<StreamPart> {
  const { providerId } = config;
  const call = new HttpCall(providerId, config.url, config.timeoutMs, request.signal);
  try {
    let body: string;
    try {
      body = JSON.stringify(wire.buildBody(request, config));
    } catch (error) {
      const message = `Cannot serialise the request: ${(error as Error).message}`;
      yield { type: 'error', error: malformedResponseInfo(providerId, 0, message, undefined) };
      return;
    }
    const res = await call.post(headersFor(config, wire), body, request.onSent && (() => sent(request)));
    if (res.status < 200 || res.status >= 300) {
      yield {
        type: 'error',
        error: httpErrorInfo(providerId, res.status, res.headers, await call.errorText(res)),
      };
      return;
    }
    const reading: Reading = {
      providerId,
      call,
      res,
      wire,
      context: { providerId, requestId: call.requestId },
      maxBytes: config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    };
    // A server may answer a stream request with plain JSON (some gateways do); read it whole then.
    const contentType = res.headers.get('content-type') ?? '';
    if (!config.stream || !contentType.includes('text/event-stream')) yield* wholeParts(reading, contentType);
    else yield* sseParts(reading, request);
  } catch (error) {
    if (error instanceof CallFailure) {
      yield { type: 'error', error: error.info };
    } else {
      // Not a transport failure (those arrive as CallFailure): a defect here, not worth retrying.
      const message = `Reading the response of provider ${providerId} failed: ${(error as Error)?.message ?? String(error)}`;
      yield { type: 'error', error: malformedResponseInfo(providerId, 0, message, call.requestId) };
    }
  } finally {
    call.close();
  }
}

/** A successful response being read: what both readers need. */
interface Reading {
  providerId: string;
  call: HttpCall;
  res: Awaited<ReturnType<HttpCall['post']>>;
  wire: WireFormat;
  context: AssemblerContext;
  maxBytes: number;
}

/** The failure part of a response that cannot be read (too large, not JSON, broken SSE). */
function unreadable({ providerId, res, call }: Reading, message: string): StreamPart {
  return { type: 'error', error: malformedResponseInfo(providerId, res.status, message, call.requestId) };
}

/** A whole JSON answer, read at once and parsed into its parts. */
async function* wholeParts(reading: Reading, contentType: string): AsyncGenerator<StreamPart> {
  const { providerId, call, res, maxBytes } = reading;
  const text = await call.text(res, maxBytes + 1);
  if (Buffer.byteLength(text) > maxBytes) {
    yield unreadable(reading, `Provider ${providerId} sent a response larger than ${maxBytes} bytes`);
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    yield unreadable(
      reading,
      `Provider ${providerId} answered HTTP ${res.status} with a body that is not JSON (${contentType || 'no content-type'}): ${clipText(text, 200)}`,
    );
    return;
  }
  const parts = reading.wire.parseWhole(json, reading.context);
  if (Array.isArray(parts)) yield* parts;
  else yield { type: 'error', error: parts };
}

/** An SSE answer: parts as its events arrive, until the wire's assembler says it is done. */
async function* sseParts(reading: Reading, request: ModelRequest): AsyncGenerator<StreamPart> {
  const { providerId, call, res, maxBytes } = reading;
  const assembler = reading.wire.createAssembler(reading.context);
  const decoder = new SseDataDecoder();
  let received = 0;
  for await (const chunk of call.chunks(res)) {
    received += chunk.length;
    if (received > maxBytes) {
      yield unreadable(
        reading,
        `Provider ${providerId} sent a response larger than ${maxBytes} bytes; it was cut off there`,
      );
      return;
    }
    for (const data of decoder.push(chunk)) {
      tap(request, data);
      for (const part of assembler.push(data)) {
        // The consumer stops at the finish: the connection is kept for the next turn.
        if (part.type === 'finish') call.markAnswered();
        yield part;
      }
      if (assembler.done) return;
    }
    if (decoder.failure !== undefined) {
      yield unreadable(reading, `Provider ${providerId} sent ${decoder.failure}`);
      return;
    }
  }
  for (const data of decoder.end()) {
    tap(request, data);
    for (const part of assembler.push(data)) yield part;
    if (assembler.done) return;
  }
  yield* assembler.end();
}

/** A `LanguageModel` speaking `wire` over HTTP. Throws `RyeError('CONFIG')` for an unusable config. */
export function createHttpModel(config: HttpProviderConfig, wire: WireFormat): LanguageModel {
  checkHttpProviderConfig(config);
  const frozen: HttpProviderConfig = { ...config, headers: { ...config.headers } };
  return {
    providerId: frozen.providerId,
    modelId: frozen.modelId,
    stream: (request) => streamParts(frozen, wire, request),
  };
}
