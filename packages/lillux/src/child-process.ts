/**
 * `node:child_process`, loaded on first use. It brings net, dgram and streams with it (~5 ms of a
 * cold start on a slow machine), which a run that starts no process never needs: `rye execute`
 * of a function-style tool runs it on a thread. Synchronous, like the spawns that use it.
 */
import type * as ChildProcessModule from 'node:child_process';
import { createRequire } from 'node:module';

let loaded: typeof ChildProcessModule | undefined;

export function childProcess(): typeof ChildProcessModule {
  loaded ??= createRequire(import.meta.url)('node:child_process') as typeof ChildProcessModule;
  return loaded;
}
