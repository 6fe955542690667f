/**
 * A queued run's hold on its thread: the fencing token its store gave it when it took the thread
 * up. A worker that stalled (paused, partitioned) past its heartbeat may find its thread taken up
 * by another; it asks before each model request, each tool call and its end whether its token is
 * still the thread's, and once it is not, it stops with no further effect.
 */
import { RyeError } from '@ryeos/lillux';
import { TAKEN_OVER } from '../runner/turn-limits.js';
import type { ThreadStore } from '../store/types.js';

export class RunLease {
  #lost = false;
  #unconfirmed = false;

  constructor(
    private readonly store: ThreadStore,
    private readonly threadId: string,
    private readonly epoch: number,
  ) {}

  /** Known lost: checked without a query where one would slow a hot path. */
  get lost(): boolean {
    return this.#lost;
  }

  /** Lost because the store could not answer, not because another run took the thread. */
  get unconfirmed(): boolean {
    return this.#unconfirmed;
  }

  /** Whether this run still holds the thread; an unreachable store counts as lost (nothing runs unowned). */
  async holds(): Promise<boolean> {
    if (this.#lost) return false;
    const holds = await this.store.registry.holdsRun!(this.threadId, this.epoch).catch(() => {
      this.#unconfirmed = true;
      return false;
    });
    if (!holds) this.#lost = true;
    return holds;
  }

  /** Throws once the thread is another run's: what was about to happen must not. */
  async fence(): Promise<void> {
    if (!(await this.holds())) {
      throw new RyeError('UNAVAILABLE', TAKEN_OVER, {
        hint: 'Nothing to do: the worker that took the thread up runs it from its transcript.',
      });
    }
  }
}
