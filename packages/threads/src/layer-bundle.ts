/**
 * The signed `.ai/` this package ships: provider definitions, agent config defaults, the
 * knowledge its hooks call and the orchestrator tool. A thread run adds it to the host's
 * executor when missing, so an embedder's executor needs no configuration to run threads.
 */
import type { Executor, SystemBundle } from '@ryeos/executor';
import { packageRootOf } from '@ryeos/executor';
import type { ThreadHost } from './host.js';

/** Id of the threads bundle among an executor's system bundles. */
export const THREADS_BUNDLE_ID = 'ryeos-threads';

/** The threads layer's own system bundle. */
export function threadsBundle(): SystemBundle {
  return { id: THREADS_BUNDLE_ID, root: packageRootOf(import.meta.url, '@ryeos/threads') };
}

/** `executor` with the threads bundle among its system bundles (itself when it has it). */
export function withThreadsBundle(executor: Executor): Promise<Executor> {
  if (executor.spaces.system.some((space) => space.bundleId === THREADS_BUNDLE_ID))
    return Promise.resolve(executor);
  return executor.withSystemBundle(threadsBundle());
}

/** `host` whose executor finds the threads items; what every thread run starts from. */
export async function withThreadsHost<Host extends ThreadHost>(host: Host): Promise<Host> {
  const executor = await withThreadsBundle(host.executor);
  return executor === host.executor ? host : { ...host, executor };
}
