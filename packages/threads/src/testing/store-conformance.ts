/**
 * The thread store conformance suite: one set of tests any `ThreadStore` implementation runs —
 * the registry, the ledger's atomicity under concurrent processes, the spawn limit, the settle
 * cascade, stale marking and wait notifications. The embedded SQLite store runs it in this
 * package's tests; a server store (its own package) calls `storeConformance` from its own.
 *
 * The test framework's functions are passed in, so this module (and `@ryeos/threads/testing`)
 * loads no test runner of its own. Races run real processes (store-worker.ts), each opening the
 * same store through the target's `workerModule`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ThreadStore } from '../store/types.js';
import type { WorkerJob } from './store-worker.js';

/** A store implementation under test. */
export interface StoreConformanceTarget {
  /** Shown in the suite's title. */
  name: string;
  /**
   * A fresh, empty store; `shared` is the JSON-serialisable value a worker process hands to
   * `workerModule`'s `openStore` to open the same store; `cleanup` removes it.
   */
  create(): Promise<{ store: ThreadStore; shared: unknown; cleanup(): Promise<void> }>;
  /** A module (path or file URL) exporting `openStore(shared): Promise<ThreadStore>`. */
  workerModule: string;
  /** Node arguments for the worker processes (`['--import', 'tsx']` for a TypeScript module). */
  nodeArgs?: readonly string[];
  /** The worker processes' working folder (where `nodeArgs` resolve). */
  cwd?: string;
}

/** The parts of the test framework the suite uses (vitest's, or any with the same shape). */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  beforeEach(body: () => Promise<void>): void;
  afterEach(body: () => Promise<void>): void;
}

/** A failed check: the suite throws these, so it needs no assertion library. */
function check(condition: boolean, message: string, actual?: unknown): asserts condition {
  if (!condition) {
    throw new Error(actual === undefined ? message : `${message} (got ${JSON.stringify(actual)})`);
  }
}

const RACE_TIMEOUT_MS = 60_000;

/** The worker script next to this module: dist/testing/store-worker.js once built, the .ts in src. */
function workerScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, 'testing', 'store-worker.js'),
    join(here, 'store-worker.js'),
    join(here, 'store-worker.ts'),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found)
    throw new Error(`The store conformance worker is missing (looked for ${candidates.join(', ')})`);
  return found;
}

/**
 * Starts one worker per job, waits until all are ready, releases them together and collects
 * their results; `whileRunning` is called every few milliseconds meanwhile.
 */
async function race<T>(
  target: StoreConformanceTarget,
  shared: unknown,
  jobs: WorkerJob[],
  whileRunning?: () => Promise<void>,
): Promise<T[]> {
  const script = workerScript();
  const workers = jobs.map((job) => {
    const child = spawn(
      process.execPath,
      [...(target.nodeArgs ?? []), script, JSON.stringify({ module: target.workerModule, shared, job })],
      { ...(target.cwd ? { cwd: target.cwd } : {}), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const done = new Promise<T>((resolve, reject) =>
      child.on('close', (code) => {
        if (code !== 0) reject(new Error(`store worker exited ${code}: ${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as T);
      }),
    );
    done.catch(() => undefined);
    return { child, done, ready: () => stdout.startsWith('ready\n') };
  });
  try {
    while (!workers.every((w) => w.ready())) {
      if (workers.some((w) => w.child.exitCode !== null)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    for (const { child } of workers) child.stdin.end('go\n');
    let running = true;
    const monitor = (async () => {
      while (running && whileRunning) {
        await whileRunning();
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    try {
      return await Promise.all(workers.map((w) => w.done));
    } finally {
      running = false;
      await monitor;
    }
  } finally {
    for (const { child } of workers) kill(child);
  }
}

function kill(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** A pid no process has: a child that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid!;
}

/** Registers the conformance tests for `target` with the test framework's functions. */
export function storeConformance(target: StoreConformanceTarget, t: ConformanceTestApi): void {
  let store: ThreadStore;
  let shared: unknown;
  let cleanup: () => Promise<void>;

  t.describe(`thread store conformance: ${target.name}`, () => {
    t.beforeEach(async () => {
      ({ store, shared, cleanup } = await target.create());
    });
    t.afterEach(async () => {
      await store.close();
      await cleanup();
    });

    const current = () => store;
    const sharedOf = () => shared;
    registryTests(t, current);
    ledgerTests(t, current);
    staleTests(t, current);
    raceTests(t, target, current, sharedOf);
    budgetRaceTest(t, target, current, sharedOf);
    waitTests(t, target, current, sharedOf);
  });
}

/** Real processes racing one store: spawn limits, a budget, slots. */
function raceTests(
  t: ConformanceTestApi,
  target: StoreConformanceTarget,
  current: () => ThreadStore,
  sharedOf: () => unknown,
): void {
  t.it(
    'holds the spawn limit when six processes race for one parent',
    async () => {
      await current().registry.register('parent/p-1', 'parent');
      const results = await race<{ granted: number }>(
        target,
        sharedOf(),
        Array.from({ length: 6 }, () => ({
          kind: 'spawn' as const,
          parent: 'parent/p-1',
          max: 600,
          attempts: 150,
        })),
      );
      const granted = results.reduce((sum, r) => sum + r.granted, 0);
      check(granted === 600, 'exactly the limit is granted across processes', granted);
      const row = await current().registry.getThread('parent/p-1');
      check(row?.spawn_count === 600, 'the spawn count is the limit', row?.spawn_count);
    },
    RACE_TIMEOUT_MS,
  );

  t.it(
    'never over-reserves a parent that fits four children while eight processes contend',
    async () => {
      await current().ledger.register('root', 1);
      const results = await race<{ granted: number; refused: number; overReserved: number[] }>(
        target,
        sharedOf(),
        Array.from({ length: 8 }, (_, worker) => ({
          kind: 'hold' as const,
          parent: 'root',
          worker,
          reserve: 0.25,
          ms: 400,
          holdMs: 1,
        })),
      );
      const over = results.flatMap((r) => r.overReserved);
      check(over.length === 0, 'a grant never left the parent over-reserved', over);
      const granted = results.reduce((sum, r) => sum + r.granted, 0);
      check(granted > 8, 'slots were reused', granted);
      check(results.reduce((sum, r) => sum + r.refused, 0) > 0, 'contention was refused, not over-granted');
      const tree = await current().ledger.getTreeSpend('root');
      check(
        tree.total_actual === 0 && tree.active_count === 1 && tree.thread_count === granted + 1,
        'every hold was released',
        tree,
      );
      check((await current().ledger.getRemaining('root')) === 1, 'the whole budget is free again');
    },
    RACE_TIMEOUT_MS,
  );
}

/** Eight processes reserving, spending and settling from one budget: it stays exact. */
function budgetRaceTest(
  t: ConformanceTestApi,
  target: StoreConformanceTarget,
  current: () => ThreadStore,
  sharedOf: () => unknown,
): void {
  t.it(
    'keeps one $1.00 budget exact while eight processes reserve, spend and settle from it',
    async () => {
      const BUDGET = 1;
      const SPEND_PER_TURN = 1 / 512; // two turns: 1/256 a cycle, so the budget pays 256 cycles
      const ATTEMPTS = 40; // 8 × 40 = 320 attempts: the budget runs out
      await current().ledger.register('root', BUDGET);
      // The invariant, read through the store over and over while the workers run.
      const violations: number[] = [];
      let reads = 0;
      const watch = async () => {
        const remaining = await current().ledger.getRemaining('root');
        reads++;
        if (remaining < -1e-9) violations.push(remaining);
      };
      const results = await race<{ completed: string[]; refused: number }>(
        target,
        sharedOf(),
        Array.from({ length: 8 }, (_, worker) => ({
          kind: 'budget' as const,
          parent: 'root',
          worker,
          attempts: ATTEMPTS,
          reserve: 1 / 32,
          turns: 2,
          spendPerTurn: SPEND_PER_TURN,
        })),
        watch,
      );
      await watch();
      check(violations.length === 0, 'the root is never over-committed', violations);
      check(reads > 1, 'the invariant was read while the workers ran', reads);
      const completed = results.flatMap((r) => r.completed);
      const refused = results.reduce((sum, r) => sum + r.refused, 0);
      check(completed.length + refused === 8 * ATTEMPTS, 'every attempt is accounted for', {
        completed: completed.length,
        refused,
      });
      check(completed.length > 0 && completed.length <= 256, 'some cycles completed, within budget');
      check(refused > 0, 'the budget ran out');
      const rootRow = await current().ledger.get('root');
      check(
        rootRow?.actual_spend === completed.length / 256,
        'every completed cycle reached the root exactly once',
        rootRow,
      );
      for (const child of completed) {
        const row = await current().ledger.get(child);
        check(
          row?.status === 'completed' && row.reserved_spend === 1 / 256 && row.actual_spend === 1 / 256,
          `child ${child} kept only what it spent`,
          row,
        );
      }
      const tree = await current().ledger.getTreeSpend('root');
      check(
        tree.thread_count === completed.length + 1 && tree.active_count === 1,
        'no reservation left',
        tree,
      );
      const remaining = await current().ledger.getRemaining('root');
      check(remaining === BUDGET - completed.length / 256, 'the rest of the budget is free', remaining);
    },
    RACE_TIMEOUT_MS,
  );
}

/** Waiting for a change another process makes, and giving up on a signal. */
function waitTests(
  t: ConformanceTestApi,
  target: StoreConformanceTarget,
  current: () => ThreadStore,
  sharedOf: () => unknown,
): void {
  t.it(
    'wakes a waiter when another process changes the registry (no polling)',
    async () => {
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(new Error('no change notification within 20 s')), 20_000);
      try {
        const seen = (async () => {
          // Armed before the writer starts; early wake-ups are allowed, so it re-reads and re-arms.
          while (!(await current().registry.exists('w/written-1'))) {
            const changed = current().waitForChange(stop.signal);
            if (await current().registry.exists('w/written-1')) break;
            await changed;
          }
        })();
        await race(target, sharedOf(), [{ kind: 'write', threadId: 'w/written-1' }]);
        await seen;
      } finally {
        clearTimeout(timer);
        stop.abort();
      }
      check((await current().registry.getThread('w/written-1'))?.status === 'completed', 'the write is seen');
    },
    RACE_TIMEOUT_MS,
  );

  t.it('rejects a wait with the signal reason when aborted, and at once for an aborted signal', async () => {
    const stop = new AbortController();
    const waiting = current().waitForChange(stop.signal);
    const reason = new Error('stop waiting');
    stop.abort(reason);
    let caught: unknown;
    await waiting.catch((error: unknown) => {
      caught = error;
    });
    check(caught === reason, 'the wait rejects with the reason');
    caught = undefined;
    await current()
      .waitForChange(stop.signal)
      .catch((error: unknown) => {
        caught = error;
      });
    check(caught === reason, 'an aborted signal rejects at once');
  });
}

function registryTests(t: ConformanceTestApi, current: () => ThreadStore): void {
  t.it('registers, reads, updates and lists threads', async () => {
    const { registry } = current();
    await registry.register('d/a-1', 'd');
    await registry.register('d/b-2', 'd', 'd/a-1');
    check(await registry.exists('d/b-2'), 'a registered thread exists');
    check(!(await registry.exists('nope')), 'an unknown id does not');
    check((await registry.getThread('nope')) === undefined, 'an unknown id has no row');
    const row = await registry.getThread('d/b-2');
    check(
      row?.status === 'created' && row.parent_id === 'd/a-1',
      'a new row is created, with its parent',
      row,
    );
    check(row.pid === process.pid, 'a new row carries the registering pid', row.pid);
    let duplicate: unknown;
    await registry.register('d/b-2', 'd').catch((error: unknown) => {
      duplicate = error;
    });
    check(
      (duplicate as { details?: { reason?: unknown } })?.details?.reason === 'thread_exists',
      'a second registration of an id is refused (ThreadAlreadyRegistered)',
    );

    await registry.updatePid('d/b-2', 4242);
    await registry.setModel('d/b-2', 'model-x');
    await registry.updateStatus('d/b-2', 'running');
    const running = await registry.getThread('d/b-2');
    check(
      running?.pid === 4242 && running.model === 'model-x' && running.completed_at === null,
      'pid, model and a running status',
      running,
    );
    await registry.updateStatus('d/b-2', 'completed');
    await registry.setResult('d/b-2', { cost: { spend: 0.25 }, outputs: { report: 'done' } });
    const done = await registry.getThread('d/b-2');
    check(done?.completed_at !== null, 'a terminal status sets completed_at', done);
    check(
      JSON.stringify(done?.result) === '{"cost":{"spend":0.25},"outputs":{"report":"done"}}',
      'the result',
    );
    const cost = { turns: 3, input_tokens: 10, output_tokens: 20, spend: 0.5, elapsed_seconds: 1 };
    check(await registry.updateCostSnapshot('d/a-1', cost), 'a cost snapshot is written');
    const snap = await registry.getThread('d/a-1');
    check(snap?.turns === 3 && snap.spend === 0.5 && snap.output_tokens === 20, 'the snapshot', snap);

    await registry.register('d/c-3', 'd', 'd/a-1');
    const active = (await registry.listActive()).map((r) => r.thread_id);
    check(JSON.stringify(active) === '["d/c-3","d/a-1"]', 'active threads, newest first', active);
    const all = (await registry.list()).map((r) => r.thread_id);
    check(JSON.stringify(all) === '["d/c-3","d/b-2","d/a-1"]', 'every thread, newest first', all);
    const limited = (await registry.list({ status: 'created', limit: 1 })).map((r) => r.thread_id);
    check(JSON.stringify(limited) === '["d/c-3"]', 'filtered by status and limited', limited);
    const children = (await registry.listChildren('d/a-1')).map((r) => r.thread_id);
    check(JSON.stringify(children) === '["d/b-2","d/c-3"]', 'children, oldest first', children);
  });

  t.it('links continuations into one chain that never forks', async () => {
    const { registry } = current();
    for (const id of ['c/a', 'c/b', 'c/c', 'c/x']) await registry.register(id, 'c');
    check(await registry.setContinuation('c/a', 'c/b'), 'the first continuation links');
    await registry.setChainInfo('c/b', 'c/a', 'c/a');
    check(!(await registry.setContinuation('c/a', 'c/x')), 'a second continuation of one thread is refused');
    check(await registry.setContinuation('c/a', 'c/b'), 'the same link again is a no-op');
    check(await registry.setContinuation('c/b', 'c/c'), 'the chain goes on');
    await registry.setChainInfo('c/c', 'c/a', 'c/b');
    const first = await registry.getThread('c/a');
    check(first?.status === 'continued' && first.continuation_thread_id === 'c/b', 'continued', first);
    const chain = (await registry.getChain('c/b')).map((r) => r.thread_id);
    check(JSON.stringify(chain) === '["c/a","c/b","c/c"]', 'the chain from any of its threads', chain);
    const last = await registry.getThread('c/c');
    check(last?.chain_root_id === 'c/a' && last.continuation_of === 'c/b', 'chain info', last);
    check((await registry.getChain('nope')).length === 0, 'no chain for an unknown id');
  });

  t.it('counts spawns atomically and gives a refused slot back', async () => {
    const { registry } = current();
    await registry.register('p/p-1', 'p');
    const granted: boolean[] = [];
    for (let i = 0; i < 4; i++) granted.push(await registry.tryIncrementSpawn('p/p-1', 3));
    check(JSON.stringify(granted) === '[true,true,true,false]', 'up to the limit', granted);
    await registry.releaseSpawn('p/p-1');
    check((await registry.getThread('p/p-1'))?.spawn_count === 2, 'a released slot is given back');
    check(!(await registry.tryIncrementSpawn('missing', 50)), 'none for an unknown parent');
  });

  t.it('lets one of two claimants take a running thread over from its recorded process', async () => {
    const { registry } = current();
    await registry.register('k/run', 'k');
    check(!(await registry.claimPid('k/run', null, 11)), 'a thread that is not running is not claimed');
    await registry.updateStatus('k/run', 'running');
    await registry.updatePid('k/run', 10);
    const claims = await Promise.all([
      registry.claimPid('k/run', 10, 11),
      registry.claimPid('k/run', 10, 12),
    ]);
    check(claims.filter(Boolean).length === 1, 'exactly one claimant wins', claims);
    const pid = (await registry.getThread('k/run'))?.pid;
    check(pid === (claims[0] ? 11 : 12), 'the winner is recorded', pid);
    check(!(await registry.claimPid('missing', null, 11)), 'none for an unknown id');
  });

  t.it('unregisters only a thread that never started', async () => {
    const { registry } = current();
    await registry.register('u/new', 'u');
    await registry.register('u/ran', 'u');
    await registry.updateStatus('u/ran', 'running');
    check(await registry.unregister('u/new'), 'a created row is removed');
    check(!(await registry.exists('u/new')), 'and is gone');
    check(!(await registry.unregister('u/ran')), 'a thread that ran keeps its row');
    check(!(await registry.unregister('u/none')), 'nothing to remove for an unknown id');
  });
}

function ledgerTests(t: ConformanceTestApi, current: () => ThreadStore): void {
  t.it('reserves from a parent and refuses what it cannot afford', async () => {
    const { ledger } = current();
    await ledger.register('p', 1);
    await ledger.reserve('p/c1', 0.75, 'p');
    check((await ledger.getRemaining('p')) === 0.25, 'the reservation counts against the parent');
    const refused = await ledger.reserve('p/c2', 0.5, 'p').then(
      () => undefined,
      (error: unknown) => error,
    );
    check(
      (refused as { details?: { reason?: unknown } })?.details?.reason === 'insufficient_budget',
      'a reservation past the remaining budget is refused (InsufficientBudget)',
    );
    check((await ledger.get('p/c2')) === undefined, 'and writes nothing');
    const ghost = await ledger.reserve('c', 0.1, 'ghost').then(
      () => undefined,
      (error: unknown) => error,
    );
    check(
      (ghost as { details?: { reason?: unknown } })?.details?.reason === 'budget_not_registered',
      'a parent without a ledger row is refused (BudgetNotRegistered)',
    );
    const spawn = await ledger.canSpawn('p', 0.25);
    check(spawn.affordable && spawn.remaining === 0.25, 'canSpawn agrees', spawn);
  });

  t.it('settles a subtree into its parent in one step, and returns what was not spent', async () => {
    const { ledger } = current();
    await ledger.register('r', 1);
    await ledger.reserve('r/c', 0.5, 'r');
    await ledger.reserve('r/c/g', 0.25, 'r/c');
    await ledger.incrementActual('r/c/g', 0.125);
    await ledger.settle('r/c/g', 0.125, 'completed');
    const child = await ledger.get('r/c');
    check(child?.actual_spend === 0.125, 'the grandchild spend reached its parent', child);
    const grandchild = await ledger.get('r/c/g');
    check(grandchild?.status === 'completed' && grandchild.reserved_spend === 0.125, 'released', grandchild);
    await ledger.settle('r/c', 0.0625, 'completed');
    const root = await ledger.get('r');
    check(root?.actual_spend === 0.1875, "the child's whole subtree reached the root", root);
    check((await ledger.getRemaining('r')) === 0.8125, 'the unspent reservation is free again');
  });

  t.it('charges a child that ended without finalizing what it recorded spent, once', async () => {
    const { ledger } = current();
    await ledger.register('e', 1);
    await ledger.reserve('e/c', 0.5, 'e');
    await ledger.incrementActual('e/c', 0.25);
    await ledger.end('e/c', 'error');
    const root = await ledger.get('e');
    check(root?.actual_spend === 0.25, 'a child that failed mid-run still spent: its parent pays it', root);
    check((await ledger.getRemaining('e')) === 0.75, 'and gets back only what was not spent');
    await ledger.end('e/c', 'error');
    check((await ledger.get('e'))?.actual_spend === 0.25, 'a second end charges nothing more');
  });

  t.it('hands the children of a thread that ends first to its parent', async () => {
    const { ledger } = current();
    await ledger.register('a', 1);
    await ledger.reserve('a/b', 0.5, 'a');
    await ledger.reserve('a/b/c', 0.25, 'a/b');
    await ledger.settle('a/b', 0, 'completed');
    check((await ledger.get('a/b/c'))?.parent_thread_id === 'a', 'the running child is adopted');
    check(
      (await ledger.getRemaining('a')) === 0.75,
      'its reservation still counts against an active ancestor',
    );
    await ledger.settle('a/b/c', 0.125, 'completed');
    check((await ledger.get('a'))?.actual_spend === 0.125, 'its spend cascades to the adopter');
  });
}

function staleTests(t: ConformanceTestApi, current: () => ThreadStore): void {
  t.it('marks threads whose process is gone as failed and releases their reservation', async () => {
    const store = current();
    const { registry, ledger } = store;
    const gone = await deadPid();
    await ledger.register('s/root', 1);
    for (const id of ['s/dead', 's/live', 's/done']) {
      await registry.register(id, 's');
      await ledger.reserve(id, 0.25, 's/root');
    }
    await registry.updateStatus('s/dead', 'running');
    await registry.updatePid('s/dead', gone);
    await registry.updateStatus('s/done', 'completed');
    await registry.updatePid('s/done', gone);
    const isAlive = (pid: number) => pid !== gone;
    const marked = await store.markStale(isAlive);
    check(JSON.stringify(marked) === '["s/dead"]', 'only the running thread of a dead process', marked);
    const dead = await registry.getThread('s/dead');
    check(dead?.status === 'error' && dead.result?.stale === true, 'failed, and says why', dead);
    check((await ledger.get('s/dead'))?.status === 'error', 'its reservation is released');
    check((await registry.getThread('s/live'))?.status === 'created', 'a live thread is left alone');
    check((await registry.getThread('s/done'))?.status === 'completed', 'a finished one too');
    check((await ledger.getRemaining('s/root')) === 0.5, 'the released budget is free again');
    check((await store.markStale(isAlive)).length === 0, 'marking again finds nothing');
  });
}
