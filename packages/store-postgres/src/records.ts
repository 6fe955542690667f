/**
 * Copies of threads' signed files (`thread.json`, `transcript.jsonl`) in the database, so a worker
 * on another machine takes a thread up without its folder. Stored as written; whoever restores a
 * copy verifies its signatures, so the database is storage here, not a source of trust.
 */
import type { SharedRecordName, SharedThreadRecords } from '@ryeos/threads';
import type { Db } from './db.js';

export interface RecordsContext {
  db: Db;
  /** The quoted schema. */
  s: string;
  project: string;
}

export class PostgresThreadRecords implements SharedThreadRecords {
  readonly #c: RecordsContext;

  constructor(context: RecordsContext) {
    this.#c = context;
  }

  async put(threadId: string, name: SharedRecordName, content: Buffer): Promise<void> {
    const { db, s, project } = this.#c;
    await db.query(
      'store',
      'putRecord',
      `INSERT INTO ${s}.thread_records (project, thread_id, name, content, updated_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (project, thread_id, name) DO UPDATE SET content = excluded.content, updated_at = now()`,
      [project, threadId, name, content],
    );
  }

  async get(threadId: string, name: SharedRecordName): Promise<Buffer | undefined> {
    const { db, s, project } = this.#c;
    const [row] = await db.query<{ content: Buffer }>(
      'store',
      'getRecord',
      `SELECT content FROM ${s}.thread_records WHERE project = $1 AND thread_id = $2 AND name = $3`,
      [project, threadId, name],
    );
    return row?.content;
  }
}
