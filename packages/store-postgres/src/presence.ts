/**
 * A worker's presence in the `workers` table, for a run queue: its own heartbeat, and which other
 * workers stopped sending theirs (by the database's clock), so their jobs can be handed to others.
 */
import { openDb } from './db.js';
import { heartbeat } from './liveness.js';
import { checkSchemaName, migrate } from './schema.js';

export interface WorkerPresenceOptions {
  connectionString: string;
  /** The schema of the store's tables (default `ryeos`). */
  schema?: string;
  workerId: string;
  /** How often this worker's heartbeat is written (default 1000 ms). */
  heartbeatMs?: number;
}

export interface WorkerPresence {
  /** Heartbeats under `id` too from now on (a queue's own id for this worker). */
  alsoAs(id: string): Promise<void>;
  /** Ids other than this worker's whose last heartbeat is older than `afterMs`. */
  stale(afterMs: number): Promise<string[]>;
  /** Removes a gone worker's row once its jobs were handed on, so it is reported once. */
  forget(workerId: string): Promise<void>;
  /** Stops the heartbeat; `leave` also removes this worker's row (a clean stop). */
  close(leave?: boolean): Promise<void>;
}

export async function openWorkerPresence(options: WorkerPresenceOptions): Promise<WorkerPresence> {
  const schema = checkSchemaName(options.schema ?? 'ryeos');
  const s = `"${schema}"`;
  const db = await openDb({
    connectionString: options.connectionString,
    poolSize: 2,
    lockTimeoutMs: 5000,
    connectTimeoutMs: 10_000,
  });
  try {
    await migrate(db, schema);
    await heartbeat(db, s, options.workerId);
  } catch (error) {
    await db.pool.end().catch(() => undefined);
    throw error;
  }
  const ids = [options.workerId];
  const beat = setInterval(() => {
    for (const id of ids) void heartbeat(db, s, id).catch(() => undefined);
  }, options.heartbeatMs ?? 1000);
  beat.unref();
  const forget = async (workerId: string) => {
    await db.query('store', 'forgetWorker', `DELETE FROM ${s}.workers WHERE worker_id = $1`, [workerId]);
  };
  return {
    async alsoAs(id) {
      await heartbeat(db, s, id);
      ids.push(id);
    },
    async stale(afterMs) {
      const rows = await db.query<{ worker_id: string }>(
        'store',
        'staleWorkers',
        `SELECT worker_id FROM ${s}.workers
         WHERE worker_id <> ALL($1::text[]) AND last_seen < now() - make_interval(secs => $2::double precision / 1000)`,
        [ids, afterMs],
      );
      return rows.map((row) => row.worker_id);
    },
    forget,
    async close(leave = false) {
      clearInterval(beat);
      if (leave) for (const id of ids) await forget(id).catch(() => undefined);
      await db.pool.end().catch(() => undefined);
    },
  };
}
