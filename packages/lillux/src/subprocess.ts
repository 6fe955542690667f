/**
 * The subprocess primitive: run a command to completion with captured (and optionally streamed)
 * output, start one detached, and kill a process tree. No shell is ever involved.
 * execa is imported lazily by `runSubprocess`, so importing this module is cheap.
 */
export { spawnDetached } from './subprocess/detached.js';
export { runSubprocess } from './subprocess/run.js';
export { killProcessTree } from './subprocess/tree.js';
export type {
  DetachedOptions,
  DetachedResult,
  SubprocessOptions,
  SubprocessResult,
} from './subprocess/types.js';
