/**
 * One HTTP attempt to a provider, read incrementally: the response headers must arrive within
 * `timeoutMs`, and then every body chunk within `timeoutMs` of the previous one. The clock only
 * runs while waiting on the network, never while the consumer handles what arrived. The caller's
 * signal cancels at any point. No retries (the runner owns them).
 */
import { describeError, isUndiciTimeout, type TransportFailure, transportErrorInfo } from './errors.js';
import type { ProviderCallErrorInfo } from './types.js';

/** A thrown failure of the call, already classified. */
export class CallFailure extends Error {
  constructor(readonly info: ProviderCallErrorInfo) {
    super(info.message);
  }
}

/** Error bodies are read up to this size; the message is near the start. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class HttpCall {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private phase: 'headers' | 'body' = 'headers';
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

  /** Sends the request; resolves with the response once its headers arrived. Throws `CallFailure`. */
  async post(headers: Record<string, string>, body: string): Promise<Response> {
    if (this.caller?.aborted) throw this.failure(undefined);
    try {
      const res = await this.bounded(
        fetch(this.url, {
          method: 'POST',
          headers,
          body,
          // A redirect is reported, never followed: the credentials in the headers stay with this host.
          redirect: 'manual',
          signal: this.controller.signal,
        }),
      );
      this.phase = 'body';
      this.requestId = res.headers.get('request-id') ?? res.headers.get('x-request-id') ?? undefined;
      return res;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** The body, chunk by chunk, as it arrives. Throws `CallFailure`. */
  async *chunks(res: Response): AsyncGenerator<Uint8Array> {
    if (res.body === null) return;
    const reader = res.body.getReader();
    try {
      for (;;) {
        let step: Awaited<ReturnType<typeof reader.read>>;
        try {
          step = await this.bounded(reader.read());
        } catch (error) {
          throw this.failure(error);
        }
        if (step.done) return;
        yield step.value;
      }
    } finally {
      reader.releaseLock();
    }
  }

  /** The whole body as text, up to `maxBytes` (the rest is dropped). Throws `CallFailure`. */
  async text(res: Response, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
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
  async errorText(res: Response): Promise<string> {
    try {
      return await this.text(res, MAX_ERROR_BODY_BYTES);
    } catch {
      return '';
    }
  }

  /** Ends the attempt: stops the clock, drops the connection if the body was not read to the end. */
  close(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
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

  /** Classifies a thrown error of fetch or of a body read. */
  failure(error: unknown): CallFailure {
    if (error instanceof CallFailure) return error;
    let kind: TransportFailure;
    let message: string;
    const who = `provider ${this.providerId}`;
    if (this.caller?.aborted) {
      kind = 'cancelled';
      message = `The request to ${who} was cancelled`;
    } else if (this.timedOut || isUndiciTimeout(error)) {
      kind = 'timeout';
      message =
        this.phase === 'headers'
          ? `No response from ${who} at ${this.url} within ${this.timeoutMs} ms`
          : `The response from ${who} stalled: no data for ${this.timeoutMs} ms`;
    } else {
      kind = 'connection';
      message =
        this.phase === 'headers'
          ? `Could not reach ${who} at ${this.url}: ${describeError(error)}`
          : `The connection to ${who} broke during the response: ${describeError(error)}`;
    }
    return new CallFailure(transportErrorInfo(this.providerId, kind, message, this.requestId));
  }
}
