/**
 * A configured database (`RYE_DATABASE_URL`): the thread registry and budget ledger live in
 * PostgreSQL and async forks go to the run queue that `rye worker` processes serve. Without it
 * nothing here is loaded and threads run as always, on SQLite and detached processes. The two
 * packages are optional: loaded on first use, with an install hint when missing.
 */
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { ThreadStoreOpener } from '@ryeos/threads';

type StorePostgres = typeof import('@ryeos/store-postgres');
type Worker = typeof import('@ryeos/worker');

/** The database every thread of these settings shares, if one is configured. */
export function databaseUrl(settings: Pick<RyeSettings, 'env'>): string | undefined {
  const url = settings.env.RYE_DATABASE_URL?.trim();
  return url ? url : undefined;
}

/** This process's worker id when it is a `rye worker` (it heartbeats under it). */
export function workerIdOf(settings: Pick<RyeSettings, 'env'>): string | undefined {
  return settings.env.RYE_WORKER_ID || undefined;
}

function isMissing(error: unknown, name: string): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    String((error as Error).message).includes(name)
  );
}

async function loadOptional<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isMissing(error, name)) throw error;
    throw new RyeError('CONFIG', `RYE_DATABASE_URL is set but ${name} is not installed`, {
      hint: 'Install the Postgres packages beside ryeos: npm install @ryeos/store-postgres @ryeos/worker (or unset RYE_DATABASE_URL to run on SQLite).',
      details: { reason: 'missing_package', package: name },
    });
  }
}

export function loadStorePostgres(): Promise<StorePostgres> {
  return loadOptional('@ryeos/store-postgres', () => import('@ryeos/store-postgres'));
}

export function loadWorker(): Promise<Worker> {
  return loadOptional('@ryeos/worker', () => import('@ryeos/worker'));
}

const openers = new Map<string, ThreadStoreOpener>();

/**
 * The thread store opener of a configured database, one per database and worker id (its stores
 * share one pool); undefined without a database.
 */
export function databaseStoreOpener(settings: Pick<RyeSettings, 'env'>): ThreadStoreOpener | undefined {
  const url = databaseUrl(settings);
  if (!url) return undefined;
  const workerId = workerIdOf(settings);
  const key = JSON.stringify([url, workerId ?? null]);
  let opener = openers.get(key);
  if (!opener) {
    const made = loadStorePostgres().then(({ postgresStoreOpener }) =>
      postgresStoreOpener({ connectionString: url, ...(workerId ? { workerId } : {}) }),
    );
    made.catch(() => undefined);
    opener = async (projectPath) => (await made)(projectPath);
    openers.set(key, opener);
  }
  return opener;
}

/**
 * Puts a prepared thread on the run queue instead of starting a detached process; its row is
 * marked queued first, so no liveness check fails it while it waits for a worker. The queue's
 * connection is closed again at once: a one-shot CLI must be free to exit.
 */
export async function enqueueThread(
  settings: Pick<RyeSettings, 'env'>,
  job: import('@ryeos/worker').ThreadJob,
  markQueued: () => Promise<void>,
): Promise<void> {
  const url = databaseUrl(settings);
  if (!url) throw new RyeError('INTERNAL', 'enqueueThread needs RYE_DATABASE_URL');
  const { openThreadQueue } = await loadWorker();
  const queue = await openThreadQueue(url);
  try {
    await markQueued();
    await queue.enqueue(job);
  } finally {
    await queue.close().catch(() => undefined);
  }
}
