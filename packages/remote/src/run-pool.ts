/**
 * A few run workers started ahead, so a run does not wait for a python and a node to start and
 * load ryeos. Each is already confined to its own fresh, empty folder and has a generic
 * environment; a run takes one, and the worker serves that run only and is then discarded, so
 * nothing of one run or user (files, secrets, memory) can reach another. Refilled once a run is
 * over, not while it runs, so a warming worker does not compete with it for the CPU.
 */
import { RyeError } from '@ryeos/lillux';
import { type RunWorker, removeRunFolder } from './run-process.js';

/** Ready workers kept unless told otherwise. */
export const DEFAULT_RUN_POOL = 2;

export class RunPool {
  private readonly ready: RunWorker[] = [];
  /** Workers whose run is over, being stopped and their folders removed. */
  private readonly retiring = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly start: () => RunWorker,
    private readonly python: string | undefined,
  ) {}

  /** Starts workers until `size` are ready (none once closed). */
  fill(): void {
    while (!this.closed && this.ready.length < this.size) {
      try {
        this.ready.push(this.start());
      } catch (error) {
        // A full disk or no process left: the next run starts its own worker and says why.
        process.stderr.write(
          `ryeos-remote: could not start a spare run worker: ${(error as Error).message}\n`,
        );
        return;
      }
    }
  }

  /** A worker for one run: a ready one, else one started now. */
  async take(): Promise<RunWorker> {
    if (this.closed) {
      throw new RyeError('UNAVAILABLE', 'The server is stopping', {
        hint: 'Run it again once the server is back.',
      });
    }
    for (let worker = this.ready.shift(); worker; worker = this.ready.shift()) {
      if (!worker.exited()) return worker;
      // It died idle (killed from outside, out of memory): its folder goes, it is never used.
      await this.dispose(worker);
    }
    return this.start();
  }

  /** Discards a worker (taken or not) and removes its folder. */
  async dispose(worker: RunWorker): Promise<void> {
    await worker.discard();
    removeRunFolder(worker.dir, this.python);
  }

  /**
   * A run is over: in the background, once the worker has exited (its supervisor has killed what
   * the run left and emptied the folder), the folder goes and a fresh worker takes its place.
   */
  retire(worker: RunWorker): void {
    const done = this.dispose(worker)
      .catch((error: unknown) => {
        process.stderr.write(`ryeos-remote: ${(error as Error).message}\n`);
      })
      .finally(() => {
        this.retiring.delete(done);
        this.fill();
      });
    this.retiring.add(done);
  }

  /** Stops every ready worker, waits for the retiring ones, and removes their folders; nothing is started after. */
  async close(): Promise<void> {
    this.closed = true;
    const idle = this.ready.splice(0);
    await Promise.all([...idle.map((worker) => this.dispose(worker)), ...this.retiring]);
  }
}
