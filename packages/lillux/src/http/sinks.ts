/**
 * Event sinks for `httpStream`, and the per-sink queue that keeps a slow, failing or stalled sink
 * from touching the stream or the other sinks.
 */
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RyeError } from '../errors.js';
import type { EventSink, SinkError, SseEvent } from './events.js';

/** Keeps the first `maxEvents` events in memory and counts the rest. */
export class ReturnSink implements EventSink {
  readonly name: string = 'return';
  readonly events: SseEvent[] = [];
  private droppedCount = 0;

  constructor(readonly maxEvents: number = 10_000) {
    if (!Number.isInteger(maxEvents) || maxEvents < 0) {
      throw new RyeError('VALIDATION', `ReturnSink: maxEvents must be an integer >= 0, got ${maxEvents}`, {
        hint: 'Pass how many events to keep, e.g. new ReturnSink(10_000).',
      });
    }
  }

  /** Events that arrived after the cap was reached. */
  get dropped(): number {
    return this.droppedCount;
  }

  write(event: SseEvent): void {
    if (this.events.length < this.maxEvents) this.events.push(event);
    else this.droppedCount++;
  }
}

/**
 * Appends one JSON line per event (`{"event","data","id"?}`), one write per event. The file and its
 * parent directories are created on the first event.
 */
export function fileSink(path: string): EventSink {
  if (typeof path !== 'string' || path === '') {
    throw new RyeError('VALIDATION', 'fileSink: path must be a non-empty string', {
      hint: 'Pass the path of the .jsonl file to append events to.',
    });
  }
  let handle: FileHandle | undefined;
  let opening: Promise<FileHandle> | undefined;
  const openOnce = (): Promise<FileHandle> => {
    opening ??= mkdir(dirname(path), { recursive: true })
      .then(() => open(path, 'a'))
      .then((h) => {
        handle = h;
        return h;
      });
    return opening;
  };
  return {
    name: `file:${path}`,
    async write(event: SseEvent): Promise<void> {
      const h = handle ?? (await openOnce());
      const record = event.id === undefined ? { event: event.event, data: event.data } : event;
      await h.write(`${JSON.stringify(record)}\n`);
    },
    async close(): Promise<void> {
      const h = handle ?? (opening ? await opening.catch(() => undefined) : undefined);
      handle = undefined;
      opening = undefined;
      await h?.close();
    },
  };
}

/** A sink that calls `fn` for each event. */
export function callbackSink(name: string, fn: (event: SseEvent) => void | Promise<void>): EventSink {
  if (typeof fn !== 'function') {
    throw new RyeError('VALIDATION', `callbackSink(${String(name)}): fn must be a function`, {
      hint: 'Pass (event) => { ... } as the second argument.',
    });
  }
  return { name: String(name), write: fn };
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== undefined && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * One sink's sequential queue. A synchronous sink is written on the spot (no allocation); once a write
 * returns a promise, later events queue behind it and are written as it settles. Nothing here is
 * awaited by the stream, and nothing here throws.
 */
export class SinkRunner {
  private queue: SseEvent[] = [];
  private head = 0;
  private busy = false;
  private abandoned = false;
  private firstError: string | undefined;
  private moreErrors = 0;
  private idleWaiters: (() => void)[] = [];
  private drainedAtEnd = false;

  constructor(readonly sink: EventSink) {}

  push(event: SseEvent): void {
    if (this.busy) {
      if (!this.abandoned) this.queue.push(event);
      return;
    }
    this.write(event);
  }

  private write(event: SseEvent): void {
    let result: unknown;
    try {
      result = this.sink.write(event);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (isThenable(result)) {
      this.busy = true;
      try {
        result.then(this.settled, this.rejected);
      } catch (error) {
        this.rejected(error);
      }
    }
  }

  private readonly settled = (): void => {
    this.busy = false;
    this.pump();
  };

  private readonly rejected = (error: unknown): void => {
    this.fail(error);
    this.busy = false;
    this.pump();
  };

  private pump(): void {
    if (this.abandoned) return;
    while (!this.busy && this.head < this.queue.length) {
      const event = this.queue[this.head]!;
      this.head++;
      this.write(event);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (!this.busy) this.wakeIdle();
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  fail(error: unknown): void {
    if (this.firstError === undefined) this.firstError = errorText(error);
    else this.moreErrors++;
  }

  /** Resolves once every queued event is written. */
  drained(): Promise<void> {
    if (!this.busy && this.head === this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drains, then closes. Never rejects; a failing close is recorded like a failing write. */
  async finish(): Promise<void> {
    await this.drained();
    this.drainedAtEnd = true;
    if (this.abandoned) return;
    await this.close();
  }

  /** Gives up on a stalled sink after `ms`: drops its queue, closes it without waiting. */
  abandon(ms: number): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.fail(
      this.drainedAtEnd ? `stalled: did not close within ${ms} ms` : `stalled: did not drain within ${ms} ms`,
    );
    this.queue = [];
    this.head = 0;
    void this.close();
  }

  private closing: Promise<void> | undefined;
  private close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.sink.close?.();
      } catch (error) {
        this.fail(error);
      }
    })();
    return this.closing;
  }

  error(): SinkError | undefined {
    if (this.firstError === undefined) return undefined;
    const error = this.moreErrors > 0 ? `${this.firstError} (+${this.moreErrors} more)` : this.firstError;
    return { sink: this.sink.name, error };
  }
}

/**
 * Waits for every runner to drain and close, all bounded by one deadline; a runner still busy then is
 * abandoned with `stalled: did not drain within N ms` (or `did not close`).
 */
export async function finishSinks(runners: readonly SinkRunner[], timeoutMs: number): Promise<void> {
  const done = runners.map(() => false);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  try {
    await Promise.race([
      Promise.all(
        runners.map((runner, i) =>
          runner.finish().then(() => {
            done[i] = true;
          }),
        ),
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
  runners.forEach((runner, i) => {
    if (!done[i]) runner.abandon(timeoutMs);
  });
}
