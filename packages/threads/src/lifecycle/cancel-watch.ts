/**
 * Cancellation reaches a running thread in-process (the caller's signal) or from another process
 * (a marker file in its folder, looked for every 200 ms): either aborts the model call in flight.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CANCEL_MARKER } from '../orchestration/control.js';

const MARKER_POLL_MS = 200;

export interface CancelWatch {
  /** Aborted once the thread was asked to stop. */
  readonly signal: AbortSignal;
  /** The marker file another process writes to cancel this thread. */
  readonly marker: string;
  isCancelled(): boolean;
  /** Stops watching (the loop has ended). */
  stop(): void;
}

export function watchCancellation(dir: string, callerSignal: AbortSignal | undefined): CancelWatch {
  const marker = join(dir, CANCEL_MARKER);
  const stop = new AbortController();
  const onCallerAbort = () => stop.abort();
  if (callerSignal?.aborted) stop.abort();
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const poll = setInterval(() => {
    if (existsSync(marker)) stop.abort();
  }, MARKER_POLL_MS);
  poll.unref();
  return {
    signal: stop.signal,
    marker,
    isCancelled: () => stop.signal.aborted || existsSync(marker),
    stop: () => {
      clearInterval(poll);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}
