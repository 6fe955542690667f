/**
 * The stats of a search's candidate files, taken by this thread and a helper thread together.
 *
 * Every search stats every file it walks, so that every edit is seen (index-cache.ts); over
 * thousands of files those stat calls are most of a warm search. A long search's files are split
 * into chunks that both threads take from a shared counter until none are left, so the result is
 * the same as statting them all here: the helper only saves time when it has a core to run on,
 * and costs nothing but a chunk's wait when it does not. The helper is started by the first long
 * search, never for a short one (a cold CLI run), does not keep the process alive, and is only
 * ever told paths to stat. Should it fail or hang, this thread stats what it left undone.
 */
import type { Stats } from 'node:fs';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { MessageChannel, Worker } from 'node:worker_threads';
import { monotonicMs } from '@ryeos/lillux';

/** node:worker_threads, loaded when the first helper starts: a cold search of a few files never needs it. */
function workerThreads(): typeof import('node:worker_threads') {
  return createRequire(import.meta.url)('node:worker_threads');
}

/**
 * Per file, four numbers: its hard link count when a regular file (0 when not; NaN until taken),
 * size, mtimeMs, ctimeMs.
 */
export type FileStats = Float64Array<ArrayBufferLike>;

/** Something with a path to stat, remembering the helper's number for it. */
export interface StatTarget {
  readonly path: string;
  statId?: number;
}

const NO_THROW = { throwIfNoEntry: false } as const;
/** Files per chunk taken from the shared counter. */
const CHUNK = 64;
/** Fewer files than this are statted here alone. */
let minParallel = 1_500;
/** Paths the helper keeps before it starts over (files come and go in a long-lived process). */
const MAX_PATHS = 500_000;
/** How long this thread waits for a chunk the helper took before it stats that chunk itself. */
const STALL_MS = 1_000;

// Control words: request generation, requests open, next index to take, files in the request,
// chunks being worked on by the helper.
const GEN = 0;
const OPEN = 1;
const NEXT = 2;
const COUNT = 3;
const INFLIGHT = 4;

const HELPER = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const { statSync } = require('node:fs');
const { control, port } = workerData;
const ctl = new Int32Array(control);
const NO_THROW = { throwIfNoEntry: false };
let paths = [];
let ids = new Int32Array(0);
let out = new Float64Array(0);
let seen = 0;
for (;;) {
  Atomics.wait(ctl, ${GEN}, seen);
  seen = Atomics.load(ctl, ${GEN});
  for (let message; (message = receiveMessageOnPort(port)); ) {
    const m = message.message;
    if (m.reset) paths = [];
    if (m.paths) for (const path of m.paths) paths.push(path);
    if (m.ids) ids = new Int32Array(m.ids);
    if (m.out) out = new Float64Array(m.out);
  }
  for (;;) {
    Atomics.add(ctl, ${INFLIGHT}, 1);
    let i = -1;
    if (Atomics.load(ctl, ${OPEN}) === 1 && Atomics.load(ctl, ${GEN}) === seen) i = Atomics.add(ctl, ${NEXT}, ${CHUNK});
    const count = Atomics.load(ctl, ${COUNT});
    if (i >= 0 && i < count) {
      for (let j = i; j < Math.min(i + ${CHUNK}, count); j++) {
        const path = paths[ids[j]];
        if (path === undefined) continue;
        let s;
        try {
          s = statSync(path, NO_THROW);
        } catch {}
        out[4 * j + 1] = s ? s.size : 0;
        out[4 * j + 2] = s ? s.mtimeMs : 0;
        out[4 * j + 3] = s ? s.ctimeMs : 0;
        out[4 * j] = s && s.isFile() ? s.nlink : 0;
      }
    }
    Atomics.sub(ctl, ${INFLIGHT}, 1);
    Atomics.notify(ctl, ${INFLIGHT});
    if (i < 0 || i >= count) break;
  }
}
`;

/** statSync that never throws: a path through a file, a loop or no permission is no file. */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, NO_THROW);
  } catch {
    return undefined;
  }
}

function write(out: FileStats, j: number, info: Stats | undefined): void {
  out[4 * j + 1] = info ? info.size : 0;
  out[4 * j + 2] = info ? info.mtimeMs : 0;
  out[4 * j + 3] = info ? info.ctimeMs : 0;
  out[4 * j] = info?.isFile() ? info.nlink : 0;
}

class StatPool {
  private readonly ctl = new Int32Array(new SharedArrayBuffer(4 * 8));
  private readonly port: MessageChannel['port1'];
  private readonly worker: Worker;
  private dead = false;
  private ids: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private out: Float64Array<ArrayBufferLike> = new Float64Array(0);
  private readonly known = new Map<string, number>();
  /** Paths given numbers since the helper was last told. */
  private pending: string[] = [];
  private reset = false;

  constructor() {
    const { MessageChannel, Worker } = workerThreads();
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(HELPER, {
      eval: true,
      workerData: { control: this.ctl.buffer, port: port2 },
      transferList: [port2],
      // A helper that stats paths needs little: keep it small.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
      // Its output is never passed on (stdout may be an MCP server's protocol stream).
      stdout: true,
      stderr: true,
    });
    this.worker.unref();
    this.port.unref();
    const stop = () => {
      this.dead = true;
    };
    this.worker.on('error', stop);
    this.worker.on('exit', stop);
  }

  private idOf(target: StatTarget): number {
    let id = target.statId;
    if (id !== undefined && this.known.get(target.path) === id) return id;
    id = this.known.get(target.path);
    if (id === undefined) {
      id = this.known.size;
      this.known.set(target.path, id);
      this.pending.push(target.path);
    }
    target.statId = id;
    return id;
  }

  stat(targets: readonly StatTarget[]): FileStats {
    const count = targets.length;
    const { ctl } = this;
    // Requests are closed and no chunk is in flight: the buffers are this thread's to fill.
    if (this.ids.length < count) {
      const capacity = Math.max(count, this.ids.length * 2);
      this.ids = new Int32Array(new SharedArrayBuffer(4 * capacity));
      this.out = new Float64Array(new SharedArrayBuffer(8 * 4 * capacity));
      this.port.postMessage({ ids: this.ids.buffer, out: this.out.buffer });
    }
    const { ids, out } = this;
    // The path table is reset before any id of this request is handed out: a reset halfway
    // would leave earlier ids of the same request pointing into the new table.
    if (this.known.size + count > MAX_PATHS) {
      this.known.clear();
      this.pending = [];
      this.reset = true;
    }
    for (let j = 0; j < count; j++) {
      ids[j] = this.idOf(targets[j]!);
      out[4 * j] = Number.NaN;
    }
    if (this.pending.length || this.reset) {
      this.port.postMessage({ reset: this.reset, paths: this.pending });
      this.pending = [];
      this.reset = false;
    }
    Atomics.store(ctl, COUNT, count);
    Atomics.store(ctl, NEXT, 0);
    Atomics.add(ctl, GEN, 1);
    Atomics.store(ctl, OPEN, 1);
    Atomics.notify(ctl, GEN);
    for (let i = Atomics.add(ctl, NEXT, CHUNK); i < count; i = Atomics.add(ctl, NEXT, CHUNK)) {
      const end = Math.min(i + CHUNK, count);
      for (let j = i; j < end; j++) write(out, j, statOf(targets[j]!.path));
    }
    // Close the request, then let the helper finish the chunks it took.
    Atomics.store(ctl, OPEN, 0);
    const started = monotonicMs();
    for (let busy = Atomics.load(ctl, INFLIGHT); busy !== 0; busy = Atomics.load(ctl, INFLIGHT)) {
      if (this.dead || monotonicMs() - started > STALL_MS) {
        this.dead = true;
        break;
      }
      Atomics.wait(ctl, INFLIGHT, busy, 50);
    }
    const result = out.slice(0, 4 * count);
    // Whatever the helper left undone (it failed or hung): taken here.
    for (let j = 0; j < count; j++) {
      if (Number.isNaN(result[4 * j])) write(result, j, statOf(targets[j]!.path));
    }
    if (this.dead) void this.worker.terminate();
    return result;
  }

  get alive(): boolean {
    return !this.dead;
  }
}

let pool: StatPool | undefined;

/** The stats of these files, in order (see the module comment). */
export function statFiles(targets: readonly StatTarget[]): FileStats {
  if (targets.length >= minParallel) {
    if (pool && !pool.alive) pool = undefined;
    if (!pool) {
      try {
        pool = new StatPool();
      } catch {
        minParallel = Number.POSITIVE_INFINITY; // no threads here: stat alone from now on
      }
    }
    if (pool) return pool.stat(targets);
  }
  const out = new Float64Array(4 * targets.length);
  for (let j = 0; j < targets.length; j++) write(out, j, statOf(targets[j]!.path));
  return out;
}

/** For tests: from how many files on the helper thread joins in. */
export function setParallelStatThreshold(files: number): void {
  minParallel = files;
}
