/**
 * The subprocess primitive: run a command to completion with captured (and optionally streamed)
 * output, start one detached, and kill a process tree. No shell is ever involved.
 * Built on node:child_process directly: execa cost ~80 ms to import on these machines, more
 * than the whole rest of a cold `rye execute`, and we only needed spawn + our own tree kill.
 */
export type { ConfineSpec } from './subprocess/confine.js';
export { CONFINE_REFUSED_EXIT, landlockSupport } from './subprocess/confine.js';
export { spawnDetached } from './subprocess/detached.js';
export { runSubprocess } from './subprocess/run.js';
export { killProcessTree } from './subprocess/tree.js';
export type {
  DetachedOptions,
  DetachedResult,
  SubprocessOptions,
  SubprocessResult,
} from './subprocess/types.js';
export type { WarmCallOptions, WorkerSettings } from './subprocess/workers.js';
export {
  closeWorkers,
  runWarm,
  startWarm,
  WorkerPool,
  warmWorkerAlive,
  warmWorkerCount,
} from './subprocess/workers.js';
