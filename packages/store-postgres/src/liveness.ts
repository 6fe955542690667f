/**
 * Which threads' runners are gone. A thread run by a worker (its row names a `worker_id`) is
 * stale when that worker's heartbeat in `workers` is older than the timeout: the database's
 * clock decides, so workers on machines whose clocks differ agree. A row without a worker falls
 * back to its pid and the caller's `isAlive`, the embedded store's contract.
 */
import { hostname } from 'node:os';
import type { PoolClient } from 'pg';
import type { Db } from './db.js';
import type { PostgresBudgetLedger } from './ledger.js';

export interface LivenessContext {
  db: Db;
  /** The quoted schema. */
  s: string;
  project: string;
  staleAfterMs: number;
}

/** Records that `workerId` is alive now (by the database's clock). */
export async function heartbeat(db: Db, s: string, workerId: string): Promise<void> {
  await db.query(
    'store',
    'heartbeat',
    `INSERT INTO ${s}.workers (worker_id, last_seen, pid, hostname) VALUES ($1, now(), $2, $3)
     ON CONFLICT (worker_id) DO UPDATE SET last_seen = now(), pid = excluded.pid, hostname = excluded.hostname`,
    [workerId, process.pid, hostname()],
  );
}

interface Candidate {
  thread_id: string;
  pid: number | null;
  worker_id: string | null;
  worker_gone: boolean;
}

/** SQL: the heartbeat of row `t`'s worker is missing or older than `timeoutParam` ms, by the server's clock. */
function workerGone(s: string, timeoutParam: string): string {
  return `NOT EXISTS (SELECT 1 FROM ${s}.workers w WHERE w.worker_id = t.worker_id
    AND w.last_seen >= now() - make_interval(secs => ${timeoutParam}::double precision / 1000))`;
}

export async function markStale(
  context: LivenessContext,
  ledger: PostgresBudgetLedger,
  isAlive: (pid: number) => boolean,
): Promise<string[]> {
  const { db, s, project, staleAfterMs } = context;
  const candidates = await db.query<Candidate>(
    'registry',
    'markStale',
    `SELECT t.thread_id, t.pid, t.worker_id, (t.worker_id IS NOT NULL AND ${workerGone(s, '$2')}) AS worker_gone
     FROM ${s}.threads t
     WHERE t.project = $1 AND t.status IN ('created', 'running') AND (t.worker_id IS NOT NULL OR t.pid IS NOT NULL)`,
    [project, staleAfterMs],
  );
  const marked: string[] = [];
  for (const row of candidates) {
    const stale = row.worker_id !== null ? row.worker_gone : !isAlive(row.pid!);
    if (!stale) continue;
    const changed = await db.transaction('registry', 'markStale', (client) =>
      markOne(client, context, ledger, row),
    );
    if (changed) marked.push(row.thread_id);
  }
  return marked;
}

/**
 * Fails one thread and ends its reservation in one transaction. The row is re-checked (status,
 * pid, worker, and the worker's heartbeat once more), so a thread that finished, moved to another
 * runner or whose worker came back meanwhile is left alone.
 */
async function markOne(
  client: PoolClient,
  context: LivenessContext,
  ledger: PostgresBudgetLedger,
  row: Candidate,
): Promise<boolean> {
  const { s, project, staleAfterMs } = context;
  const reason =
    row.worker_id !== null
      ? `Worker ${row.worker_id} stopped sending heartbeats; the thread was marked as failed.`
      : `Thread process ${row.pid} is no longer running; the thread was marked as failed when the registry was next opened.`;
  const result = JSON.stringify({
    error: reason,
    stale: true,
    pid: row.pid,
    ...(row.worker_id !== null ? { worker_id: row.worker_id } : {}),
  });
  const params: unknown[] = [project, row.thread_id, result, row.pid, row.worker_id];
  const workerCheck = row.worker_id !== null ? `AND ${workerGone(s, `$${params.push(staleAfterMs)}`)}` : '';
  const updated = await client.query(
    `UPDATE ${s}.threads t SET status = 'error', updated_at = now(), completed_at = now(), result = $3
     WHERE t.project = $1 AND t.thread_id = $2 AND t.status IN ('created', 'running')
       AND t.pid IS NOT DISTINCT FROM $4::integer AND t.worker_id IS NOT DISTINCT FROM $5::text ${workerCheck}`,
    params,
  );
  if (updated.rowCount !== 1) return false;
  await ledger.endIn(client, row.thread_id, 'error');
  return true;
}
