// The store across real processes: every fork is its own process (spec threads §11), so limits
// and budgets only hold if SQLite enforces them. Workers run test/fixtures/store-worker.mjs
// through tsx and start together on a signal.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openThreadStore, type ThreadStore } from '../src/store/index.js';

const PACKAGE_DIR = join(import.meta.dirname, '..');
const WORKER = join(import.meta.dirname, 'fixtures', 'store-worker.mjs');

let root: string;
let stateDir: string;
let store: ThreadStore;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'rye-store-procs-'));
  stateDir = join(root, '.ai', 'state', 'threads');
  store = openThreadStore(stateDir);
});

afterEach(async () => {
  store.close();
  rmSync(root, { recursive: true, force: true });
});

/** Starts one worker per job, waits until all are ready, releases them together, collects results. */
async function race<T>(jobs: Record<string, unknown>[], whileRunning?: () => void): Promise<T[]> {
  const workers = jobs.map((job) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(job)], {
      cwd: PACKAGE_DIR,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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
        if (code !== 0) reject(new Error(`worker exited ${code}: ${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as T);
      }),
    );
    done.catch(() => {});
    return { child, done, ready: () => stdout.startsWith('ready\n') };
  });
  try {
    while (!workers.every((w) => w.ready())) {
      if (workers.some((w) => w.child.exitCode !== null)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    for (const { child } of workers) child.stdin.end('go\n');
    const monitor = whileRunning && setInterval(whileRunning, 2);
    try {
      return await Promise.all(workers.map((w) => w.done));
    } finally {
      if (monitor) clearInterval(monitor);
    }
  } finally {
    for (const { child } of workers) kill(child);
  }
}

function kill(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

describe('the thread store across processes', () => {
  it('holds the spawn limit when six processes race for one parent (the reference counted per process)', async () => {
    await store.registry.register('parent/parent-1', 'parent');
    const results = await race<{ granted: number }>(
      Array.from({ length: 6 }, () => ({
        kind: 'spawn',
        stateDir,
        parent: 'parent/parent-1',
        max: 1000,
        attempts: 250,
      })),
    );
    expect(results.reduce((sum, r) => sum + r.granted, 0)).toBe(1000);
    expect((await store.registry.getThread('parent/parent-1'))!.spawn_count).toBe(1000);
  });

  it('keeps one $1.00 budget exact while eight processes reserve, spend, report and release', async () => {
    const BUDGET = 1;
    const RESERVE = 1 / 32;
    const SPEND_PER_TURN = 1 / 512; // two turns: 1/256 a cycle, so the budget allows 256 cycles
    const ATTEMPTS = 40; // 8 × 40 = 320 attempts: the budget runs out
    await store.ledger.register('root', BUDGET);

    // A separate connection checks the invariant over and over while the workers run.
    const watcher = new Database(join(stateDir, 'budget_ledger.db'), { readonly: true });
    const snapshot = watcher.prepare(`SELECT max_spend, actual_spend,
        (SELECT COALESCE(SUM(reserved_spend), 0) FROM budget_ledger WHERE parent_thread_id = 'root' AND status = 'active') AS held
      FROM budget_ledger WHERE thread_id = 'root'`);
    const violations: unknown[] = [];
    let checks = 0;
    const check = () => {
      const s = snapshot.get() as { max_spend: number; actual_spend: number; held: number };
      checks++;
      if (s.actual_spend + s.held > s.max_spend) violations.push(s);
    };

    let results: { completed: string[]; refused: number }[];
    try {
      results = await race(
        Array.from({ length: 8 }, (_, worker) => ({
          kind: 'budget',
          stateDir,
          parent: 'root',
          worker,
          attempts: ATTEMPTS,
          reserve: RESERVE,
          turns: 2,
          spendPerTurn: SPEND_PER_TURN,
        })),
        check,
      );
      check();
    } finally {
      watcher.close();
    }

    expect(violations).toEqual([]);
    expect(checks).toBeGreaterThan(1);
    const completed = results.flatMap((r) => r.completed);
    const refused = results.reduce((sum, r) => sum + r.refused, 0);
    expect(completed.length + refused).toBe(8 * ATTEMPTS);
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.length).toBeLessThanOrEqual(256);
    expect(refused).toBeGreaterThan(0);

    const { ledger } = store;
    // No lost update: every completed cycle's spend reached the root, exactly.
    const rootRow = (await ledger.get('root'))!;
    expect(rootRow.actual_spend).toBe(completed.length / 256);
    expect(rootRow.actual_spend).toBeLessThanOrEqual(BUDGET);
    // Every reservation was released back to the root: children keep only what they spent.
    for (const child of completed) {
      expect(await ledger.get(child)).toMatchObject({
        parent_thread_id: 'root',
        status: 'completed',
        actual_spend: 1 / 256,
        reserved_spend: 1 / 256,
      });
    }
    expect(await ledger.getTreeSpend('root')).toMatchObject({
      thread_count: completed.length + 1,
      active_count: 1,
    });
    expect(await ledger.getRemaining('root')).toBe(BUDGET - completed.length / 256);
    // The root's own final report (no own spend) agrees with what was cascaded.
    await ledger.reportActual('root', 0);
    expect((await ledger.get('root'))!.actual_spend).toBe(completed.length / 256);
  });

  it('never over-reserves a parent that fits four children while eight processes contend for it', async () => {
    // Each worker grabs a quarter of the budget, checks the parent, holds 1 ms and releases.
    // (Without BEGIN IMMEDIATE around check-and-insert this finds hundreds of over-reservations.)
    await store.ledger.register('root', 1);
    const results = await race<{ granted: number; refused: number; overReserved: number[] }>(
      Array.from({ length: 8 }, (_, worker) => ({
        kind: 'hold',
        stateDir,
        parent: 'root',
        worker,
        reserve: 0.25,
        ms: 400,
        holdMs: 1,
      })),
    );
    expect(results.flatMap((r) => r.overReserved)).toEqual([]);
    const granted = results.reduce((sum, r) => sum + r.granted, 0);
    expect(granted).toBeGreaterThan(8);
    expect(results.reduce((sum, r) => sum + r.refused, 0)).toBeGreaterThan(0);
    expect(await store.ledger.getTreeSpend('root')).toEqual({
      total_actual: 0,
      total_reserved: 1,
      thread_count: granted + 1,
      active_count: 1,
    });
    expect(await store.ledger.getRemaining('root')).toBe(1);
  });

  it('lets eight processes create a fresh store at the same moment', async () => {
    const fresh = join(root, 'fresh', '.ai', 'state', 'threads');
    const results = await race<{ pid: number; registered: boolean }>(
      Array.from({ length: 8 }, () => ({ kind: 'register', stateDir: fresh })),
    );
    expect(results.every((r) => r.registered)).toBe(true);
    // Its workers have exited: looking at their rows as they left them, not as stale threads.
    const other = openThreadStore(fresh, { markStale: false });
    try {
      for (const { pid } of results) {
        expect(await other.registry.getThread(`race/${pid}`)).toMatchObject({ pid, status: 'created' });
        expect(await other.ledger.get(`race/${pid}`)).toMatchObject({ max_spend: 1, status: 'active' });
      }
    } finally {
      other.close();
    }
  });

  it('loads better-sqlite3 only when a store is opened, not on import', async () => {
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const addons = [];
      const dlopen = process.dlopen;
      process.dlopen = (module, file, ...rest) => { addons.push(file); return dlopen(module, file, ...rest); };
      const loaded = () => Object.keys(require.cache).some((k) => k.includes('better-sqlite3'));
      const { openThreadStore } = await import('./src/store/index.ts');
      const onImport = { js: loaded(), addons: addons.length };
      const store = openThreadStore(${JSON.stringify(join(root, 'lazy'))});
      store.close();
      console.log(JSON.stringify({ onImport, onOpen: { js: loaded(), addons: addons.filter((f) => f.includes('better_sqlite3')).length } }));
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: PACKAGE_DIR,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      onImport: { js: false, addons: 0 },
      onOpen: { js: true, addons: 1 },
    });
  });
});
