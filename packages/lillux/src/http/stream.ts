/**
 * `httpStream`: an SSE request whose events are fanned out to a return sink and extra sinks as they
 * arrive. Never throws for network, HTTP or sink failures; they are reported in the result.
 */

import { monotonicMs } from '../clock.js';
import {
  type AttemptTimer,
  callerAbortText,
  checkNumber,
  describeError,
  headersRecord,
  httpErrorText,
  invalid,
  parseJson,
  prepareRequest,
  withRetries,
} from './request.js';
import { finishSinks, ReturnSink, SinkRunner } from './sinks.js';
import { SseDecoder } from './sse.js';
import type { EventSink, HttpStreamOptions, HttpStreamResult, SseEvent } from './types.js';

function checkSink(sink: unknown, where: string): EventSink {
  const s = sink as Partial<EventSink> | null;
  if (typeof s !== 'object' || s === null || typeof s.write !== 'function' || typeof s.name !== 'string') {
    throw invalid(
      `httpStream: ${where} is not an event sink`,
      'A sink is an object with a string `name` and a `write(event)` method; see callbackSink/fileSink.',
    );
  }
  return s as EventSink;
}

/** Reads the body into the decoder; returns why the stream broke, or `undefined` when it ended cleanly. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  timer: AttemptTimer,
  decoder: SseDecoder,
  caller: AbortSignal | undefined,
): Promise<string | undefined> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      timer.refresh();
      decoder.push(value);
      if (decoder.failure !== undefined) {
        await reader.cancel().catch(() => undefined);
        return decoder.failure;
      }
    }
    decoder.end();
    return decoder.failure;
  } catch (error) {
    if (caller?.aborted) return callerAbortText(caller);
    if (timer.timedOut) return `Timed out after ${timer.timeoutMs} ms without data`;
    return describeError(error);
  } finally {
    timer.clear();
  }
}

/** Streams an SSE response into the sinks; see `HttpStreamOptions`. */
export async function httpStream(options: HttpStreamOptions): Promise<HttpStreamResult> {
  const req = prepareRequest(options);
  const extra = options.sinks ?? [];
  if (!Array.isArray(extra)) {
    throw invalid(
      'httpStream: sinks must be an array',
      'Pass sinks: [fileSink(path), callbackSink(name, fn)].',
    );
  }
  const sinks = extra.map((sink, i) => checkSink(sink, `sinks[${i}]`));
  const returnSink = options.returnSink ?? new ReturnSink();
  checkSink(returnSink, 'returnSink');
  const sinkCloseTimeoutMs = checkNumber('sinkCloseTimeoutMs', options.sinkCloseTimeoutMs, 2000, { min: 0 });

  const runners = [returnSink, ...sinks].map((sink) => new SinkRunner(sink));
  const count = runners.length;
  let events = 0;
  const emit = (event: SseEvent): void => {
    events++;
    for (let i = 0; i < count; i++) runners[i]!.push(event);
  };

  const started = monotonicMs();
  let success = false;
  let status = 0;
  let headers: Record<string, string> = {};
  let attempts = 0;
  let error: string | undefined;
  let body: string | undefined;
  try {
    const outcome = await withRetries(req, async (res, timer) => {
      if (res.status >= 200 && res.status < 300) return { res, timer, text: undefined };
      try {
        return { res, timer, text: await res.text() };
      } finally {
        timer.clear();
      }
    });
    attempts = outcome.attempts;
    if (!outcome.ok) {
      error = outcome.error;
    } else {
      const { res, timer, text } = outcome.value;
      status = res.status;
      headers = headersRecord(res.headers);
      if (text !== undefined) {
        body = text;
        success = status < 400;
        if (!success) error = httpErrorText(res);
      } else if (res.body === null) {
        timer.clear();
        success = true;
      } else {
        const broke = await readEvents(res.body, timer, new SseDecoder(emit), req.signal);
        success = broke === undefined;
        if (broke !== undefined) error = `Stream broke after ${events} events: ${broke}`;
      }
    }
  } catch (unexpected) {
    // Defensive: nothing above should throw, but a result is owed either way.
    success = false;
    error = `Stream failed: ${describeError(unexpected)}`;
  } finally {
    await finishSinks(runners, sinkCloseTimeoutMs);
  }

  const result: HttpStreamResult = {
    success,
    status,
    headers,
    duration_ms: Math.round(monotonicMs() - started),
    attempts,
    events: returnSink.events,
    stream_events_count: events,
    stream_destinations: runners.map((r) => r.sink.name),
    sink_errors: runners.flatMap((r) => r.error() ?? []),
  };
  if (body !== undefined) {
    result.body = body;
    const json = parseJson(body);
    if (json !== undefined) result.json = json;
  }
  if (error !== undefined) result.error = error;
  return result;
}
