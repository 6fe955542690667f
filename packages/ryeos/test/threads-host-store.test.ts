/**
 * The store a thread uses comes from its host: an embedder that hands `createThreadHost` its own
 * opener gets every registry and ledger call of the run (and of the queries after it) in that
 * store, and the project gets no `registry.db`. Here the embedder's store is the SQLite store in a
 * folder of its own choosing, wrapped to record each call.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair } from '@ryeos/lillux';
import {
  createThreadHost,
  getThreadStatus,
  listThreads,
  openThreadStore,
  runThread,
  signerFromKeyPair,
  type ThreadStore,
  type ThreadStoreOpener,
  waitThreads,
} from '@ryeos/threads';
import { describe, expect, it } from 'vitest';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';

const fixture = useLookFixture();

/** Wraps `store` so each registry and ledger call is recorded as `registry.getThread`, … */
function recording(store: ThreadStore, calls: string[]): ThreadStore {
  // The store's parts are frozen objects of functions: copied, each function wrapped.
  const part = <T extends object>(name: string, target: T): T =>
    Object.fromEntries(
      Object.entries(target).map(([key, value]) => [
        key,
        typeof value === 'function'
          ? (...args: unknown[]) => {
              calls.push(`${name}.${key}`);
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            }
          : value,
      ]),
    ) as T;
  return {
    stateDir: store.stateDir,
    registry: part('registry', store.registry),
    ledger: part('ledger', store.ledger),
    markStale: (isAlive: (pid: number) => boolean) => store.markStale(isAlive),
    waitForChange: (signal: AbortSignal) => store.waitForChange(signal),
    close: () => store.close(),
  } satisfies ThreadStore;
}

function embedderStore(stateDir: string) {
  const calls: string[] = [];
  const opened: string[] = [];
  let open = 0;
  const opener: ThreadStoreOpener = async (projectPath) => {
    opened.push(projectPath);
    open += 1;
    const store = recording(openThreadStore(stateDir), calls);
    return {
      ...store,
      close: async () => {
        open -= 1;
        await store.close();
      },
    };
  };
  return { opener, calls, opened, stillOpen: () => open };
}

describe("a thread's store comes from its host", () => {
  it("sends the run's registry and ledger calls to the host's store, and writes no registry.db in the project", async () => {
    const fx = fixture();
    await fx.serve(LOOK_SCRIPT);
    const mine = embedderStore(join(fx.root, 'embedder-store'));
    const host = createThreadHost({
      executor: await fx.rye.executor(),
      projectPath: fx.project,
      signer: signerFromKeyPair(generateKeyPair()),
      store: mine.opener,
      dispatch: async () => ({ status: 'success', results: [{ ref: 'knowledge:acme/notes' }] }),
    });

    const result = await runThread(host, { directiveId: 'acme/look' });

    expect(result, JSON.stringify(result)).toMatchObject({ success: true, status: 'completed' });
    expect(mine.opened.every((path) => path === fx.project)).toBe(true);
    expect(mine.calls).toEqual(
      expect.arrayContaining([
        'registry.register',
        'registry.updateStatus',
        'registry.setResult',
        'ledger.register',
        'ledger.incrementActual',
        'ledger.settle',
      ]),
    );
    expect(mine.stillOpen()).toBe(0);
    const threadsState = join(fx.project, '.ai', 'state', 'threads');
    expect(existsSync(join(threadsState, 'registry.db'))).toBe(false);
    expect(existsSync(join(threadsState, 'budget_ledger.db'))).toBe(false);
    // The signed records still live beside the project: only the bookkeeping moved.
    expect(existsSync(join(threadsState, result.thread_id!, 'thread.json'))).toBe(true);
    const row = await (async () => {
      const store = openThreadStore(join(fx.root, 'embedder-store'));
      try {
        return await store.registry.getThread(result.thread_id!);
      } finally {
        await store.close();
      }
    })();
    expect(row?.status).toBe('completed');
  });

  it('lets the functions called without a host read the same store', async () => {
    const fx = fixture();
    await fx.serve(LOOK_SCRIPT);
    const mine = embedderStore(join(fx.root, 'embedder-store'));
    const host = createThreadHost({
      executor: await fx.rye.executor(),
      projectPath: fx.project,
      signer: signerFromKeyPair(generateKeyPair()),
      store: mine.opener,
      dispatch: async () => ({ status: 'success', results: [] }),
    });
    const { thread_id } = await runThread(host, { directiveId: 'acme/look' });
    const store = { store: mine.opener };

    expect((await listThreads(fx.project, {}, store)).map((t) => t.thread_id)).toEqual([thread_id]);
    expect(await getThreadStatus(fx.project, thread_id!, store)).toMatchObject({ status: 'completed' });
    const waited = await waitThreads(fx.project, [thread_id!], { timeoutSeconds: 0, ...store });
    expect(waited.results[thread_id!]).toMatchObject({ status: 'completed' });
    // Without the opener they read the project's SQLite store, which never ran a thread.
    expect(await listThreads(fx.project)).toEqual([]);
    expect(mine.stillOpen()).toBe(0);
    expect(existsSync(join(fx.project, '.ai', 'state', 'threads', 'registry.db'))).toBe(false);
  });

  it('refuses a store that is not an opener with a typed error', async () => {
    const fx = fixture();
    const executor = await fx.rye.executor();
    expect(() =>
      createThreadHost({
        executor,
        projectPath: fx.project,
        dispatch: async () => ({ status: 'success' }),
        store: {} as never,
      }),
    ).toThrow(expect.objectContaining({ name: 'RyeError', code: 'VALIDATION' }));
  });
});
