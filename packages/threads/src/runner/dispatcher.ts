/**
 * When the calls of a streaming turn run (spec threads §9 "Batching", seed 002, DECISIONS 6).
 *
 * Calls are handed over in stream order as each completes. They are released in batches of
 * `tool_batch_size`, at most `tool_batch_delay` apart: a call that arrives when no batch window is
 * open starts at once and opens one; calls arriving inside the window wait for it to close, or
 * for the batch to fill. (The seed's timer only ever delays; starting the first call at once keeps
 * the batching and removes its latency, which is what streaming is for.)
 *
 * Released calls run in lanes: one lane per item, calls of a lane one after another in stream
 * order, lanes side by side up to `max_concurrency`. So five calls of one tool run once each in
 * the order the model wrote them, while calls of different tools overlap (a tool that declares
 * `__parallel_safe__` gives each call its own lane: calls.ts `laneOf`).
 */

export interface DispatchSettings {
  /** streaming.yaml `tool_batch_size` (5). */
  batchSize: number;
  /** streaming.yaml `tool_batch_delay` in ms (100). 0 releases every call at once. */
  batchDelayMs: number;
  /** Calls running at the same time across lanes (streaming.yaml `max_concurrent_tools`, 8). */
  maxConcurrency: number;
}

export const DEFAULT_DISPATCH: DispatchSettings = { batchSize: 5, batchDelayMs: 100, maxConcurrency: 8 };

interface Job<R> {
  lane: string;
  run: () => Promise<R>;
  resolve: (value: R) => void;
  /** performance.now() when the call was handed over. */
  submittedAt: number;
}

/** A counting semaphore: at most `size` holders. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = Math.max(1, size);
  }
  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

export class CallDispatcher<R> {
  private pending: Job<R>[] = [];
  private window: NodeJS.Timeout | undefined;
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly slots: Slots;
  private readonly running = new Set<Promise<R>>();
  /** Milliseconds from hand-over to start, per call, in start order. */
  readonly startDelaysMs: number[] = [];

  /** `rescue` turns a call that threw (it should not) into its result, so a turn always settles. */
  constructor(
    private readonly settings: DispatchSettings,
    private readonly rescue: (error: unknown) => R,
  ) {
    this.slots = new Slots(settings.maxConcurrency);
  }

  /** Hands over a complete call; resolves with its result once it has run. */
  submit(lane: string, run: () => Promise<R>): Promise<R> {
    let resolve!: (value: R) => void;
    const result = new Promise<R>((r) => {
      resolve = r;
    });
    this.running.add(result);
    void result.finally(() => this.running.delete(result));
    this.pending.push({ lane, run, resolve, submittedAt: performance.now() });
    if (this.window === undefined) {
      this.release();
      this.openWindow();
    } else if (this.pending.length >= this.settings.batchSize) {
      this.release();
    }
    return result;
  }

  /** Releases whatever is waiting (the stream ended) and resolves once every call has run. */
  async settle(): Promise<void> {
    this.closeWindow();
    this.release();
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Stops the batch timer (the turn is over); calls already released still finish. */
  dispose(): void {
    this.closeWindow();
  }

  private openWindow(): void {
    if (this.settings.batchDelayMs <= 0) return;
    this.window = setTimeout(() => {
      this.window = undefined;
      if (this.pending.length > 0) {
        this.release();
        this.openWindow();
      }
    }, this.settings.batchDelayMs);
  }

  private closeWindow(): void {
    if (this.window !== undefined) clearTimeout(this.window);
    this.window = undefined;
  }

  private release(): void {
    const batch = this.pending;
    this.pending = [];
    for (const job of batch) {
      const before = this.lanes.get(job.lane) ?? Promise.resolve();
      const done = before.then(() => this.start(job));
      this.lanes.set(job.lane, done);
      // The last call of a lane forgets it, so the map holds only lanes with work.
      void done.then(() => {
        if (this.lanes.get(job.lane) === done) this.lanes.delete(job.lane);
      });
    }
  }

  private async start(job: Job<R>): Promise<void> {
    await this.slots.acquire();
    this.startDelaysMs.push(performance.now() - job.submittedAt);
    try {
      job.resolve(await job.run());
    } catch (error) {
      job.resolve(this.rescue(error));
    } finally {
      this.slots.release();
    }
  }
}
