/**
 * Warm workers: a long-lived process (or worker thread) that answers many calls, so a call costs
 * a message instead of a process start.
 *
 * Identity: a worker is keyed by everything that defines the process it would be — command,
 * arguments, working directory and the whole environment — so it only ever serves calls that a
 * fresh process started for them would also have served. The runtimes pass the verified tool
 * snapshot (content-addressed) and the project in the arguments and the spaces in the
 * environment: one worker never serves two tools' bytes, two projects or two trust spaces.
 *
 * Protocol (JSON, one object per line, both ways on the process's fd 3, a socket; its stdin is
 * /dev/null and its stdout and stderr are only a log; the same objects over the port for a
 * thread). The host sends `{id, input, max_output_bytes, progress}` (`input` is what the one-shot
 * process would read on stdin); the worker answers `{id, stdout, stderr, exit_code, truncated?}`
 * (what the one-shot process would have printed) and, when `progress` is set, may send
 * `{id, stream, chunk}` while the call runs. End of file on fd 3 means the host is gone: the
 * worker ends, with whatever it started. The worker learns it is one from `RYE_WORKER_PROTOCOL=1`
 * (process) or `workerData.ryeWorker` (thread). With `RYE_WORKER_PROTOCOL=2` (`signedAnswers`)
 * the host's first line is `{key}` (32 random bytes, base64) and every line the worker writes is
 * `<HMAC-SHA256 of the JSON under the key, base64url> <JSON>`.
 *
 * Failure: a worker that exits or crashes fails its running calls with a clear error and is
 * replaced on the next call. A timeout or an abort stops the worker (and its process tree):
 * other calls running on it fail too, with an error that says so; calls still waiting for a slot
 * (never sent) move to a new worker. At most 16 workers live at once; a call beyond that runs as
 * a one-shot process of the same script.
 */
import { realpathSync } from 'node:fs';
import { monotonicMs } from '../clock.js';
import { RyeError } from '../errors.js';
import { type ConfineSpec, validateConfine } from './confine.js';
import { runSubprocess } from './run.js';
import { elapsed, launchLine, osErrorMessage, spawnErrorSentence } from './shared.js';
import type { SubprocessResult } from './types.js';
import type { Channel, WorkerMessage } from './worker-channel.js';
import { openChannel } from './worker-channel.js';

export interface WorkerSettings {
  /** Retire the worker after this long without calls (default 60 s). */
  idleMs?: number;
  /** Calls a worker runs at once; more wait their turn (default 16). */
  maxConcurrency?: number;
  /**
   * Run the worker script (`args[0]`) as a thread of this process when `command` is this
   * process's own node executable: no process start at all. Only for a one-shot host: a thread
   * shares the host's descriptors (what a tool writes to fd 1 itself reaches the host's stdout)
   * and its working directory (`cwd` becomes the whole process's).
   */
  thread?: boolean;
  /**
   * The worker signs every line it writes on fd 3 with a key the host gives it as its first
   * line (`RYE_WORKER_PROTOCOL=2`), and the host drops a line whose signature does not match.
   * For a worker that cannot mark itself not dumpable (node): another process of the same user
   * can take a copy of its fd 3 (`pidfd_getfd`), and would otherwise answer its calls.
   */
  signedAnswers?: boolean;
}

export interface WarmCallOptions {
  command: string;
  args?: readonly string[];
  cwd?: string;
  /** The worker's whole environment (nothing is inherited). */
  env: Record<string, string>;
  /** What a one-shot run would read on stdin. */
  input?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxOutputBytes?: number;
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  worker?: WorkerSettings;
  /**
   * Run the worker confined by Landlock to these folders (see confine.ts). Part of the worker's
   * identity, and a confined worker is never a thread: a thread would share the host's rights.
   */
  confine?: ConfineSpec;
}

const DEFAULT_IDLE_MS = 60_000;
const DEFAULT_CONCURRENCY = 16;
const DEFAULT_TIMEOUT_MS = 300_000;
/** Idle workers kept at most; the least recently used idle one retires first. */
const MAX_IDLE_WORKERS = 8;
/**
 * Workers alive at most (busy ones included); a call beyond runs as a one-shot process. A node
 * worker is ~45 MB: the cap bounds what many projects or tools can make a server hold.
 */
const MAX_WORKERS = 16;

interface Pending {
  resolve(result: SubprocessResult): void;
  start: number;
  timer: NodeJS.Timeout | undefined;
  options: WarmCallOptions;
  cleanup(): void;
}

/** A call waiting for a free slot: never sent, so it can move to another worker. */
interface Queued {
  options: WarmCallOptions;
  start: number;
  resolve(result: SubprocessResult): void;
  cleanup(): void;
}

let ownNode: string | undefined;
function isOwnNode(command: string): boolean {
  ownNode ??= realOr(process.execPath);
  return command === process.execPath || realOr(command) === ownNode;
}

function realOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function failure(start: number, error: string, extra: Partial<SubprocessResult> = {}): SubprocessResult {
  return {
    success: false,
    stdout: '',
    stderr: error,
    exit_code: -1,
    duration_ms: elapsed(start),
    timed_out: false,
    error,
    ...extra,
  };
}

class WarmWorker {
  private readonly channel: Channel;
  private readonly running = new Map<number, Pending>();
  private readonly waiting: Queued[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  dead = false;
  lastUsed = monotonicMs();

  constructor(
    readonly key: string,
    private readonly options: WarmCallOptions,
    private readonly settings: Required<WorkerSettings>,
    private readonly onGone: (worker: WarmWorker) => void,
    /** Hands a call that was never sent to another worker (this one is gone). */
    private readonly requeue: (
      options: WarmCallOptions,
      start: number,
      resolve: (r: SubprocessResult) => void,
    ) => void,
  ) {
    const thread =
      settings.thread &&
      options.confine === undefined &&
      isOwnNode(options.command) &&
      options.args?.[0] !== undefined;
    const line = launchLine(options.command, options.args ?? [], options.confine, 'runWarm');
    this.channel = openChannel(
      {
        command: thread ? options.command : line.command,
        args: thread ? (options.args ?? []) : line.args,
        cwd: options.cwd,
        env: { ...options.env, RYE_WORKER_PROTOCOL: settings.signedAnswers && !thread ? '2' : '1' },
        thread,
        signedAnswers: settings.signedAnswers && !thread,
      },
      { message: (m) => this.receive(m), exit: (reason, error) => this.gone(reason, error) },
    );
    this.channel.hold(false);
  }

  get busy(): boolean {
    return this.running.size > 0 || this.waiting.length > 0;
  }

  /** Runs the call now, or queues it until a slot frees (an abort while queued cancels it). */
  accept(options: WarmCallOptions, start: number, resolve: (r: SubprocessResult) => void): void {
    if (options.signal?.aborted) {
      resolve(failure(start, 'Command cancelled before it started', { cancelled: true }));
      return;
    }
    clearTimeout(this.idleTimer);
    this.lastUsed = monotonicMs();
    if (this.running.size < this.settings.maxConcurrency) {
      this.dispatch(options, start, resolve);
      return;
    }
    const onAbort = () => {
      const at = this.waiting.indexOf(queued);
      if (at !== -1) this.waiting.splice(at, 1);
      resolve(failure(start, 'Command cancelled before it started', { cancelled: true }));
    };
    const queued: Queued = {
      options,
      start,
      resolve,
      cleanup: () => options.signal?.removeEventListener('abort', onAbort),
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.waiting.push(queued);
  }

  private dispatch(options: WarmCallOptions, start: number, resolve: (r: SubprocessResult) => void): void {
    if (this.dead) {
      this.requeue(options, start, resolve);
      return;
    }
    if (options.signal?.aborted) {
      resolve(failure(start, 'Command cancelled before it started', { cancelled: true }));
      return;
    }
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const onAbort = () => this.stop(id, 'cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const pending: Pending = {
      resolve,
      start,
      options,
      timer: Number.isFinite(timeoutMs)
        ? setTimeout(() => this.stop(id, 'timed_out'), Math.min(timeoutMs, 2 ** 31 - 1))
        : undefined,
      cleanup: () => {
        clearTimeout(pending.timer);
        options.signal?.removeEventListener('abort', onAbort);
      },
    };
    this.running.set(id, pending);
    this.channel.hold(true);
    this.channel.send({
      id,
      input: options.input ?? '',
      max_output_bytes: options.maxOutputBytes ?? null,
      progress: Boolean(options.onStdout || options.onStderr),
    });
  }

  private receive(message: WorkerMessage): void {
    const id = typeof message.id === 'number' ? message.id : -1;
    const pending = this.running.get(id);
    if (!pending) return;
    if (typeof message.stream === 'string') {
      const chunk = typeof message.chunk === 'string' ? message.chunk : '';
      if (message.stream === 'stdout') pending.options.onStdout?.(chunk);
      else pending.options.onStderr?.(chunk);
      return;
    }
    const exitCode = typeof message.exit_code === 'number' ? message.exit_code : -1;
    const result: SubprocessResult = {
      success: exitCode === 0,
      stdout: typeof message.stdout === 'string' ? message.stdout : '',
      stderr: typeof message.stderr === 'string' ? message.stderr : '',
      exit_code: exitCode,
      duration_ms: elapsed(pending.start),
      timed_out: false,
    };
    const truncated = message.truncated as SubprocessResult['truncated'] | undefined;
    if (truncated && typeof truncated === 'object') result.truncated = truncated;
    this.finish(id, result);
  }

  private finish(id: number, result: SubprocessResult): void {
    const pending = this.running.get(id);
    if (!pending) return;
    this.running.delete(id);
    pending.cleanup();
    pending.resolve(result);
    const next = this.waiting.shift();
    if (next) {
      next.cleanup();
      this.dispatch(next.options, next.start, next.resolve);
    } else if (this.running.size === 0) this.rest();
  }

  /** Started ahead of its first call: idle from birth, so it retires if no call comes. */
  startIdle(): void {
    if (!this.busy) this.rest();
  }

  /** Idle: let the host exit, and retire after the idle time. */
  private rest(): void {
    if (this.dead) return;
    this.lastUsed = monotonicMs();
    this.channel.hold(false);
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.retire('idle'), this.settings.idleMs);
    this.idleTimer.unref();
  }

  /** A call timed out or was cancelled: the worker (and anything it runs) is stopped. */
  private stop(id: number, why: 'timed_out' | 'cancelled'): void {
    const pending = this.running.get(id);
    if (!pending) return;
    const seconds = (pending.options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
    const error =
      why === 'timed_out'
        ? `Timed out after ${seconds} seconds (the worker was stopped)`
        : 'Command cancelled (the worker was stopped)';
    this.running.delete(id);
    pending.cleanup();
    pending.resolve(
      failure(pending.start, error, why === 'timed_out' ? { timed_out: true } : { cancelled: true }),
    );
    // Calls running on it fail; calls still waiting move to a new worker.
    this.retire(why === 'timed_out' ? 'another call on it timed out' : 'another call on it was cancelled');
  }

  /** Settles once the worker has exited. */
  get ended(): Promise<void> {
    return this.channel.ended;
  }

  /** Stops the worker; calls still on it fail with `reason`. */
  retire(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.idleTimer);
    this.onGone(this);
    this.channel.kill();
    this.failAll(`The worker was stopped (${reason}); retry the call`);
  }

  private gone(reason: string, spawnError?: unknown): void {
    const wasDead = this.dead;
    this.dead = true;
    clearTimeout(this.idleTimer);
    if (!wasDead) this.onGone(this);
    if (spawnError !== undefined) {
      const sentence = spawnErrorSentence(spawnError, this.options.command, this.options.cwd);
      this.failAll(sentence, `Failed to spawn: ${osErrorMessage(spawnError)}`);
      return;
    }
    this.failAll(`The worker ${reason}`);
  }

  private failAll(error: string, stderr = error): void {
    for (const [id, pending] of [...this.running]) {
      this.running.delete(id);
      pending.cleanup();
      pending.resolve({ ...failure(pending.start, error), stderr });
    }
    for (const queued of this.waiting.splice(0)) {
      queued.cleanup();
      this.requeue(queued.options, queued.start, queued.resolve);
    }
  }
}

/** The warm workers of this process, by identity. */
export class WorkerPool {
  private readonly workers = new Map<string, WarmWorker>();

  /** Runs one call on the worker for these options, starting it if needed. Never throws for a failed call. */
  run(options: WarmCallOptions): Promise<SubprocessResult> {
    const settings = settingsOf(options, 'runWarm');
    return new Promise((resolve) => this.place(options, settings, monotonicMs(), resolve));
  }

  /**
   * Starts the worker a call with these options would use, without a call, so the first call does
   * not wait for it. False when it already runs or no slot is free (a call would then run one-shot).
   */
  start(options: WarmCallOptions): boolean {
    const settings = settingsOf(options, 'startWarm');
    const existing = this.workers.get(identity(options, settings));
    if (existing && !existing.dead) return false;
    this.trimIdle();
    if (this.workers.size >= MAX_WORKERS) return false;
    this.spawn(identity(options, settings), options, settings).startIdle();
    return true;
  }

  private spawn(key: string, options: WarmCallOptions, settings: Required<WorkerSettings>): WarmWorker {
    const worker = new WarmWorker(
      key,
      options,
      settings,
      (gone) => {
        if (this.workers.get(gone.key) === gone) this.workers.delete(gone.key);
      },
      (again, at, done) => this.place(again, settings, at, done),
    );
    this.workers.set(key, worker);
    return worker;
  }

  private place(
    options: WarmCallOptions,
    settings: Required<WorkerSettings>,
    start: number,
    resolve: (r: SubprocessResult) => void,
  ): void {
    const key = identity(options, settings);
    let worker = this.workers.get(key);
    if (!worker || worker.dead) {
      this.trimIdle();
      if (this.workers.size >= MAX_WORKERS) {
        // Every slot is busy: this call runs alone, as a one-shot process of the same script.
        void runOneShot(options).then(resolve);
        return;
      }
      worker = this.spawn(key, options, settings);
    }
    worker.accept(options, start, resolve);
  }

  /** Whether a live worker for these options exists (what `start` would leave alone). */
  has(options: WarmCallOptions): boolean {
    const existing = this.workers.get(identity(options, settingsOf(options, 'warmWorkerAlive')));
    return existing !== undefined && !existing.dead;
  }

  /** Workers alive now (busy or idle). */
  get size(): number {
    return this.workers.size;
  }

  /** Stops every worker; calls still running fail. Settles once they have all exited. */
  close(): Promise<void> {
    const workers = [...this.workers.values()];
    for (const worker of workers) worker.retire('the host is shutting down');
    return Promise.all(workers.map((worker) => worker.ended)).then(() => {});
  }

  private trimIdle(): void {
    const idle = [...this.workers.values()].filter((w) => !w.busy);
    if (this.workers.size < MAX_IDLE_WORKERS + 1 || idle.length === 0) return;
    idle.sort((a, b) => a.lastUsed - b.lastUsed);
    idle[0]!.retire('too many idle workers');
  }
}

/** The call as a one-shot process: the worker scripts run a single call when not told otherwise. */
function runOneShot(options: WarmCallOptions): Promise<SubprocessResult> {
  const { worker: _worker, ...rest } = options;
  return runSubprocess({ ...rest, envMode: 'replace' });
}

function settingsOf(options: WarmCallOptions, caller: string): Required<WorkerSettings> {
  if (typeof options.command !== 'string' || options.command === '') {
    throw new RyeError('VALIDATION', `${caller}: command must be a non-empty string`);
  }
  if (options.confine !== undefined) validateConfine(options.confine, caller);
  return {
    idleMs: positive(options.worker?.idleMs, DEFAULT_IDLE_MS),
    maxConcurrency: Math.floor(positive(options.worker?.maxConcurrency, DEFAULT_CONCURRENCY)),
    thread: options.worker?.thread === true,
    signedAnswers: options.worker?.signedAnswers === true,
  };
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Everything that makes two workers different processes. */
function identity(options: WarmCallOptions, settings: Required<WorkerSettings>): string {
  const env = Object.keys(options.env)
    .sort()
    .map((k) => [k, options.env[k]]);
  return JSON.stringify([
    options.command,
    options.args ?? [],
    options.cwd ?? '',
    env,
    settings.thread,
    settings.signedAnswers,
    options.confine ?? null,
  ]);
}

// The process's one pool, also when this module is bundled into several files: a shutdown must
// stop the workers that every copy started.
const SHARED = Symbol.for('ryeos.lillux.workers');
const holder = globalThis as Record<symbol, WorkerPool | undefined>;

/** Runs one call on this process's shared warm workers (see `WorkerPool.run`). */
export function runWarm(options: WarmCallOptions): Promise<SubprocessResult> {
  holder[SHARED] ??= new WorkerPool();
  return holder[SHARED].run(options);
}

/** Starts this process's shared warm worker for these options ahead of a call (see `WorkerPool.start`). */
export function startWarm(options: WarmCallOptions): boolean {
  holder[SHARED] ??= new WorkerPool();
  return holder[SHARED].start(options);
}

/**
 * Stops this process's shared warm workers (a server shutting down, a one-shot CLI done with its
 * call, a test cleaning up); settles once they have exited.
 */
export function closeWorkers(): Promise<void> {
  return holder[SHARED]?.close() ?? Promise.resolve();
}

/** Whether this process has a live shared warm worker for these options. */
export function warmWorkerAlive(options: WarmCallOptions): boolean {
  return holder[SHARED]?.has(options) ?? false;
}

/** How many shared warm workers are alive. */
export function warmWorkerCount(): number {
  return holder[SHARED]?.size ?? 0;
}
