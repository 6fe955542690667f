// The store across real processes: every fork is its own process (spec threads §11), so limits
// and budgets only hold if SQLite enforces them. Workers run test/fixtures/store-worker.mjs
// through tsx and start together on a signal.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

// The spawn-limit and budget races are in the store conformance suite (store-conformance.test.ts),
// which every store implementation runs; these two are about the SQLite files themselves.
describe('the thread store across processes', () => {
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
