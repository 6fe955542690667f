/**
 * One HTTP attempt to a provider, read incrementally: the response headers must arrive within
 * `timeoutMs`, and then every body chunk within `timeoutMs` of the previous one. The clock only
 * runs while waiting on the network, never while the consumer handles what arrived. The caller's
 * signal cancels at any point. No retries (the runner owns them).
 *
 * Over `node:http`/`node:https`, not the global `fetch`: on Node 20 a process's first `fetch`
 * costs ~60 ms (undici loads and compiles its HTTP parser), `node:http`'s ~10 ms, and a thread
 * process makes exactly one first call before its model answers. Redirects are never followed
 * (the credentials in the headers stay with this host) and keep-alive comes from the global agent.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { describeError, type HeaderReader, type TransportFailure, transportErrorInfo } from './errors.js';
import type { ProviderCallErrorInfo } from './types.js';

/** A provider's answer once its headers arrived; its body is read through the `HttpCall`. */
export interface ProviderResponse {
  status: number;
  headers: HeaderReader;
  body: IncomingMessage;
}

/** A URL for messages: scheme, host and path only (a query may carry a key, userinfo a password). */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

function headerReader(headers: IncomingHttpHeaders): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** A thrown failure of the call, already classified. */
export class CallFailure extends Error {
  constructor(readonly info: ProviderCallErrorInfo) {
    super(info.message);
  }
}

/** Error bodies are read up to this size; the message is near the start. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * What may follow an answer's last event before the body ends (normally nothing): read within
 * this many bytes and milliseconds, the connection goes back to the pool; past either, it is cut.
 */
const MAX_TAIL_BYTES = 64 * 1024;
const TAIL_MS = 2_000;

export class HttpCall {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private phase: 'headers' | 'body' = 'headers';
  private response: IncomingMessage | undefined;
  /** The body was read to its end. */
  private complete = false;
  /** The answer's last event arrived: only the end of the body may still come. */
  private answered = false;
  private reader: AsyncIterator<Buffer> | undefined;
  private readonly onCallerAbort = (): void => this.controller.abort(this.caller?.reason);
  requestId: string | undefined;

  constructor(
    private readonly providerId: string,
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /**
   * Sends the request; resolves with the response once its headers arrived. Throws `CallFailure`.
   * `onSent` is called once the whole request has been handed to the network.
   */
  async post(headers: Record<string, string>, body: string, onSent?: () => void): Promise<ProviderResponse> {
    if (this.caller?.aborted) throw this.failure(undefined);
    try {
      const res = await this.bounded(this.send(headers, body, onSent));
      this.phase = 'body';
      this.requestId = res.headers.get('request-id') ?? res.headers.get('x-request-id') ?? undefined;
      return res;
    } catch (error) {
      throw this.failure(error);
    }
  }

  private send(
    headers: Record<string, string>,
    body: string,
    onSent?: () => void,
  ): Promise<ProviderResponse> {
    return new Promise((resolve, reject) => {
      const url = new URL(this.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        reject(new Error(`unsupported URL scheme ${url.protocol} (http: or https: only)`));
        return;
      }
      // node:http would send them as Basic auth, and they would show in every error message.
      if (url.username || url.password) {
        reject(
          new Error("the URL holds credentials (user:password@): put them in the provider's auth or headers"),
        );
        return;
      }
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: this.controller.signal,
      });
      request.once('error', reject);
      if (onSent) request.once('finish', onSent);
      request.once('response', (res) => {
        this.response = res;
        resolve({ status: res.statusCode ?? 0, headers: headerReader(res.headers), body: res });
      });
      request.end(body);
    });
  }

  /** The body, chunk by chunk, as it arrives. Throws `CallFailure`. */
  async *chunks(res: ProviderResponse): AsyncGenerator<Uint8Array> {
    const reader = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    this.reader = reader;
    for (;;) {
      let step: IteratorResult<Buffer>;
      try {
        step = await this.bounded(reader.next());
      } catch (error) {
        throw this.failure(error);
      }
      if (step.done) {
        this.complete = true;
        return;
      }
      yield step.value;
    }
  }

  /** The whole body as text, up to `maxBytes` (the rest is dropped). Throws `CallFailure`. */
  async text(res: ProviderResponse, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of this.chunks(res)) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) break;
    }
    return Buffer.concat(parts).toString('utf8');
  }

  /** An error body, read within the same timeouts; whatever was read if that fails. */
  async errorText(res: ProviderResponse): Promise<string> {
    try {
      return await this.text(res, MAX_ERROR_BODY_BYTES);
    } catch {
      return '';
    }
  }

  /** The answer is whole (its final event arrived): `close` reads the body's end instead of cutting it. */
  markAnswered(): void {
    this.answered = true;
  }

  /**
   * Ends the attempt: stops the clock, drops the connection if the body was not read to the end
   * (one read to the end goes back to the agent's pool for the next turn). An answered body's
   * end is read in the background, so the next turn reuses the connection instead of opening one.
   */
  close(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
    if (this.complete) return;
    if (this.answered && this.reader) void this.readTail(this.reader);
    else this.drop();
  }

  private drop(): void {
    this.controller.abort();
    this.response?.destroy();
  }

  /** Reads what follows an answered body's last event; a tail that is long or slow is cut. */
  private async readTail(reader: AsyncIterator<Buffer>): Promise<void> {
    const timer = setTimeout(() => this.drop(), TAIL_MS);
    timer.unref();
    // Reading the tail never keeps a process alive: a one-shot CLI exits on its own time.
    this.response?.socket?.unref();
    let left = MAX_TAIL_BYTES;
    try {
      for (;;) {
        const step = await reader.next();
        if (step.done) return;
        left -= step.value.length;
        if (left < 0) return this.drop();
      }
    } catch {
      this.drop();
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for `promise` with the clock running. */
  private async bounded<T>(promise: Promise<T>): Promise<T> {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new DOMException(`Timed out after ${this.timeoutMs} ms`, 'TimeoutError'));
    }, this.timeoutMs);
    try {
      return await promise;
    } finally {
      clearTimeout(this.timer);
    }
  }

  /** Classifies a thrown error of the request or of a body read. */
  failure(error: unknown): CallFailure {
    if (error instanceof CallFailure) return error;
    let kind: TransportFailure;
    let message: string;
    const who = `provider ${this.providerId}`;
    if (this.caller?.aborted) {
      kind = 'cancelled';
      message = `The request to ${who} was cancelled`;
    } else if (this.timedOut) {
      kind = 'timeout';
      message =
        this.phase === 'headers'
          ? `No response from ${who} at ${shownUrl(this.url)} within ${this.timeoutMs} ms`
          : `The response from ${who} stalled: no data for ${this.timeoutMs} ms`;
    } else {
      kind = 'connection';
      message =
        this.phase === 'headers'
          ? `Could not reach ${who} at ${shownUrl(this.url)}: ${describeError(error)}`
          : `The connection to ${who} broke during the response: ${describeError(error)}`;
    }
    return new CallFailure(transportErrorInfo(this.providerId, kind, message, this.requestId));
  }
}
