/**
 * Worker threads that boot before their script is known. A thread takes ~50 ms to start node; a
 * one-shot host (`rye execute`) starts one as soon as it sees it may run a function-style tool,
 * and the thread boots on another core while the host loads its modules and verifies the call.
 * The thread is then told which script to run, with which argv and environment, and imports it.
 * A small module of its own: the CLI's entry imports it without the rest of lillux.
 */
import { Worker } from 'node:worker_threads';

const BOOT_KEY = '__ryeBoot';
const THREAD_ID_KEY = '__ryeThreadId';
/**
 * Builtins the runtimes' worker scripts (node/function's function-worker.mjs, launch.mjs) import
 * as ES modules: `node:module` alone; they take the others through `require`, which builds no
 * ES module facade (a facade of node:fs reads fs.ReadStream, which loads node's streams).
 */
const WARM_BUILTINS = ['module'];
// While it waits for its script, the thread loads what any script needs first, on its own core:
// node's ES module loader (set up by the first import) and the builtins the runtimes' worker
// scripts import (measured: the script's first answer 6 ms sooner, 17 → 11 ms on a slow VM).
// Messages that arrive while the script loads are held, then handed to it: the script's own
// listener exists once its module has run, and nothing runs between that and the import's
// resolution (a message is a task; the resolution, a microtask).
const BOOT_CODE = `
const { parentPort } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
// What the thread prints goes to the host's stderr, written by the thread itself: never to the
// host's stdout (the CLI's answer, an MCP channel), never through a stream of the host's. Its
// process.stdout and process.stderr are plain streams onto fd 2; node's own stdio of a thread
// (see bootableThread) is never created, so nothing a tool does with these streams (end(), a
// write through Writable.prototype) can keep the host running or reach it.
const { writeSync } = require('node:fs');
const { Writable } = require('node:stream');
// (SharedArrayBuffer can be switched off: then the retries do not sleep.)
const pause = typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
// The host's stderr may be non-blocking (a pipe node made so): a full pipe is waited on, 5000
// times 1 ms at least per write, rather than what is left of the write dropped.
function toStderr(bytes) {
  for (let waited = 0; bytes.length > 0; ) {
    try {
      bytes = bytes.subarray(writeSync(2, bytes));
    } catch (error) {
      if (error?.code !== 'EAGAIN' || waited++ >= 5000) return;
      if (pause) Atomics.wait(pause, 0, 0, 1);
    }
  }
}
for (const name of ['stdout', 'stderr']) {
  const stream = new Writable({
    write(chunk, encoding, callback) {
      toStderr(chunk);
      callback();
    },
    // As node's own stdio: destroy() leaves it usable.
    destroy(error, callback) {
      callback(error);
      this._undestroy();
    },
  });
  // Its descriptor, for a tool that writes to process.stdout.fd itself: fd 2, as the stream.
  stream.fd = 2;
  Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });
}
import('data:text/javascript,').catch(() => {});
for (const name of ${JSON.stringify(WARM_BUILTINS)}) import('node:' + name).catch(() => {});
const held = [];
let loading = false;
parentPort.on('message', function boot(message) {
  if (loading) return void held.push(message);
  const spec = message && message.${BOOT_KEY};
  if (!spec) return;
  loading = true;
  // The thread's id in the kernel, told before anything of the script runs: the host finds what
  // the tool starts among this thread's children (Linux; 0 elsewhere).
  let tid = 0;
  try { tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) || 0; } catch {}
  parentPort.postMessage({ ${THREAD_ID_KEY}: tid });
  process.argv = [process.argv[0], spec.script, ...spec.argv];
  for (const name of Object.keys(process.env)) delete process.env[name];
  Object.assign(process.env, spec.env);
  // require()'s global folders come from NODE_PATH and HOME, read when the thread booted with an
  // empty environment: read again, so a package resolves as it would in a worker process.
  require('node:module')._initPaths?.();
  import(pathToFileURL(spec.script).href).then(() => {
    parentPort.off('message', boot);
    for (const message of held.splice(0)) parentPort.emit('message', message);
  }, (error) => setImmediate(() => { throw error; }));
});
`;

// One slot per process, also when this module is bundled into several files (the CLI's entry
// starts the thread, the execute bundle's copy takes it).
const SLOT = Symbol.for('ryeos.lillux.prestarted-thread');
const slot = globalThis as typeof globalThis & { [SLOT]?: Worker };

/** A thread that waits for `bootThread` to say what to run. */
export function bootableThread(env: Record<string, string>): Worker {
  return new Worker(BOOT_CODE, {
    eval: true,
    env,
    workerData: { ryeWorker: 1 },
    // The host's own flags (a profiler, a test runner's loader) are not the tool's.
    execArgv: [],
    // The thread writes its output to fd 2 itself (BOOT_CODE), and never uses these streams.
    // Piping them into the host's, node's default, makes the host create its own process.stdout
    // and process.stderr first: 2-3 ms before the thread can start, on a cold `rye execute`
    // whose answer waits for the thread. (The worker script then routes what a tool prints
    // during a call into that call's log.)
    stdout: true,
    stderr: true,
  });
}

/** Tells a bootable thread to run `script` with `argv` and exactly the environment `env`. */
export function bootThread(
  worker: Worker,
  script: string,
  argv: string[],
  env: Record<string, string>,
): void {
  worker.postMessage({ [BOOT_KEY]: { script, argv, env } });
}

/**
 * Starts one thread now, for this process's next thread worker. It never keeps the host alive;
 * unused, it ends with the host. Only a one-shot host should: see `WorkerSettings.thread`.
 */
export function prestartWorkerThread(): void {
  if (slot[SLOT]) return;
  let worker: Worker;
  try {
    worker = bootableThread({});
  } catch {
    return;
  }
  worker.unref();
  worker.on('error', () => {});
  slot[SLOT] = worker;
}

/** The thread `prestartWorkerThread` started, once. */
export function takePrestartedThread(): Worker | undefined {
  const worker = slot[SLOT];
  slot[SLOT] = undefined;
  return worker;
}

/**
 * The kernel thread id a booted thread reports, from its first message (which its boot code sends
 * before the script runs); undefined for any other message.
 */
export function reportedThreadId(message: unknown): number | undefined {
  if (!message || typeof message !== 'object' || !(THREAD_ID_KEY in message)) return undefined;
  const tid = (message as Record<string, unknown>)[THREAD_ID_KEY];
  return typeof tid === 'number' && Number.isSafeInteger(tid) && tid >= 0 ? tid : undefined;
}
