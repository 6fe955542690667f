/**
 * Starts the warm workers of a thread's palette tools in the background, so the first call of a
 * function-style tool does not wait for its worker process to start. Only the palette's own tools
 * are warmed (what the thread's capabilities put in front of the model), one after another; the run
 * starts them once its first model request is out, so that request never waits for them. A tool without a
 * worker starts nothing, and a failure is left for the real call to report. Workers belong to the
 * host, shared and retired when idle: a thread that ends stops none of them.
 */
import type { Executor } from '@ryeos/executor';
import type { PaletteEntry } from './palette.js';

/** Resolves once every palette tool has been tried; never rejects. */
export function warmPaletteTools(
  executor: Executor,
  entries: readonly PaletteEntry[],
  withheldEnv: readonly string[],
  signal?: AbortSignal,
): Promise<void> {
  const ids = entries.filter((entry) => entry.kind === 'tool').map((entry) => entry.itemId);
  if (ids.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    setImmediate(async () => {
      for (const id of ids) {
        // The thread has ended: the rest are not started (a one-shot host is about to exit).
        if (signal?.aborted) break;
        // The same options as the thread's own calls, so the worker started is the one they use.
        await executor.executeTool(id, {}, { warmOnly: true, withheldEnv }).catch(() => undefined);
      }
      resolve();
    });
  });
}
