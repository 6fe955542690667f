/**
 * Versioned migrations of the store's tables, in a schema of their own (default `ryeos`). Every
 * opener runs them in one transaction under an advisory lock, so two processes opening the same
 * database at once never both create a table; a database migrated by a newer version is refused.
 */
import { RyeError } from '@ryeos/lillux';
import type { Db } from './db.js';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** Refuses a schema name that is not a plain lower-case identifier (it is spliced into SQL). */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new RyeError(
      'VALIDATION',
      `Invalid PostgreSQL schema name for the thread store: ${JSON.stringify(schema)}`,
      {
        hint: 'Use lower-case letters, digits and underscores, starting with a letter or underscore (at most 48 characters).',
        details: { reason: 'invalid_schema', schema },
      },
    );
  }
  return schema;
}

const STATUSES = "'created', 'running', 'completed', 'error', 'cancelled', 'continued'";

/** Each migration's SQL, `{s}` standing for the quoted schema. Append only; never edit a shipped one. */
export const MIGRATIONS: readonly { version: number; description: string; sql: string }[] = [
  {
    version: 1,
    description: 'registry, budget ledger and worker heartbeats',
    sql: `
CREATE TABLE {s}.workers (
  worker_id  text PRIMARY KEY,
  last_seen  timestamptz NOT NULL,
  pid        integer,
  hostname   text
);
CREATE TABLE {s}.threads (
  project                text NOT NULL,
  thread_id              text NOT NULL,
  seq                    bigserial,
  directive              text NOT NULL,
  parent_id              text,
  status                 text NOT NULL DEFAULT 'created' CHECK (status IN (${STATUSES})),
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  completed_at           timestamptz,
  result                 text,
  turns                  integer NOT NULL DEFAULT 0,
  input_tokens           bigint NOT NULL DEFAULT 0,
  output_tokens          bigint NOT NULL DEFAULT 0,
  spawn_count            integer NOT NULL DEFAULT 0,
  spend                  numeric NOT NULL DEFAULT 0,
  pid                    integer,
  worker_id              text,
  model                  text,
  continuation_of        text,
  continuation_thread_id text,
  chain_root_id          text,
  PRIMARY KEY (project, thread_id)
);
CREATE INDEX threads_parent ON {s}.threads (project, parent_id);
CREATE INDEX threads_status ON {s}.threads (project, status);
CREATE INDEX threads_worker ON {s}.threads (worker_id) WHERE worker_id IS NOT NULL;
CREATE TABLE {s}.budget_ledger (
  project          text NOT NULL,
  thread_id        text NOT NULL,
  parent_thread_id text,
  reserved_spend   numeric NOT NULL DEFAULT 0,
  actual_spend     numeric NOT NULL DEFAULT 0,
  max_spend        numeric,
  status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'error', 'cancelled')),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (project, thread_id),
  FOREIGN KEY (project, parent_thread_id) REFERENCES {s}.budget_ledger (project, thread_id) ON DELETE RESTRICT
);
CREATE INDEX budget_parent ON {s}.budget_ledger (project, parent_thread_id);
-- The ledger's multi-step changes, each one call (one round trip, one transaction): the row lock
-- is held for microseconds, not for a client's round trips.
CREATE FUNCTION {s}.budget_remaining(p_project text, p_thread text) RETURNS numeric
LANGUAGE sql STABLE AS $$
  -- Negative amounts are clamped to 0: the store never writes one, so it was planted and must never add budget.
  SELECT GREATEST(COALESCE(bl.max_spend, 0), 0) - GREATEST(bl.actual_spend, 0) - COALESCE((
    SELECT SUM(GREATEST(c.reserved_spend, 0)) FROM {s}.budget_ledger c
    WHERE c.project = bl.project AND c.parent_thread_id = bl.thread_id AND c.status = 'active'), 0)
  FROM {s}.budget_ledger bl WHERE bl.project = p_project AND bl.thread_id = p_thread
$$;
-- Ends a locked row: its active children go to its parent, its unused reservation returns.
CREATE FUNCTION {s}.budget_close(p_project text, p_thread text, p_parent text, p_status text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_parent IS NOT NULL THEN
    UPDATE {s}.budget_ledger SET parent_thread_id = p_parent, updated_at = now()
    WHERE project = p_project AND parent_thread_id = p_thread AND status = 'active';
  END IF;
  UPDATE {s}.budget_ledger SET reserved_spend = actual_spend, status = p_status, updated_at = now()
  WHERE project = p_project AND thread_id = p_thread;
END $$;
CREATE FUNCTION {s}.budget_reserve(p_project text, p_thread text, p_amount numeric, p_parent text,
    p_child_max numeric, p_epsilon numeric)
  RETURNS TABLE (outcome text, remaining numeric, existing_parent text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_parent_found boolean;
  v_existing record;
  v_remaining numeric;
BEGIN
  -- The parent's row lock: every other reservation from this parent waits until this one commits.
  PERFORM 1 FROM {s}.budget_ledger WHERE project = p_project AND thread_id = p_parent FOR UPDATE;
  v_parent_found := FOUND;
  SELECT parent_thread_id, status INTO v_existing FROM {s}.budget_ledger
  WHERE project = p_project AND thread_id = p_thread;
  IF FOUND THEN
    IF v_existing.parent_thread_id IS DISTINCT FROM p_parent THEN
      RETURN QUERY SELECT 'wrong_parent'::text, NULL::numeric, v_existing.parent_thread_id; RETURN;
    END IF;
    -- A detached child re-entering finds its reservation made by the parent: nothing to do.
    IF v_existing.status = 'active' THEN
      RETURN QUERY SELECT 'exists'::text, NULL::numeric, NULL::text; RETURN;
    END IF;
  END IF;
  IF EXISTS (SELECT 1 FROM {s}.budget_ledger WHERE project = p_project
             AND (thread_id = p_thread OR parent_thread_id = p_thread)) THEN
    RETURN QUERY SELECT 'occupied'::text, NULL::numeric, NULL::text; RETURN;
  END IF;
  IF NOT v_parent_found THEN
    RETURN QUERY SELECT 'no_parent'::text, NULL::numeric, NULL::text; RETURN;
  END IF;
  v_remaining := {s}.budget_remaining(p_project, p_parent);
  IF v_remaining + p_epsilon < p_amount THEN
    RETURN QUERY SELECT 'insufficient'::text, v_remaining, NULL::text; RETURN;
  END IF;
  INSERT INTO {s}.budget_ledger
    (project, thread_id, parent_thread_id, reserved_spend, max_spend, status, created_at, updated_at)
  VALUES (p_project, p_thread, p_parent, p_amount, p_child_max, 'active', now(), now());
  RETURN QUERY SELECT 'reserved'::text, v_remaining, NULL::text;
END $$;
-- A thread's end: its own spend plus its finished children's, charged to its parent, then closed.
CREATE FUNCTION {s}.budget_settle(p_project text, p_thread text, p_own numeric, p_status text)
  RETURNS TABLE (actual_spend numeric, reserved_spend numeric)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_parent text;
  v_actual numeric;
  v_reserved numeric;
BEGIN
  -- The thread's own row first: its parent pointer cannot move (adoption) while it is held.
  SELECT parent_thread_id INTO v_parent FROM {s}.budget_ledger
  WHERE project = p_project AND thread_id = p_thread FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  -- Children still running are left out: they are adopted by the parent and cascade there.
  UPDATE {s}.budget_ledger b SET actual_spend = p_own + COALESCE((
      SELECT SUM(c.actual_spend) FROM {s}.budget_ledger c
      WHERE c.project = p_project AND c.parent_thread_id = p_thread AND c.status <> 'active'), 0),
    updated_at = now()
  WHERE b.project = p_project AND b.thread_id = p_thread
  RETURNING b.actual_spend, b.reserved_spend INTO v_actual, v_reserved;
  IF v_parent IS NOT NULL THEN
    UPDATE {s}.budget_ledger SET actual_spend = actual_spend + v_actual, updated_at = now()
    WHERE project = p_project AND thread_id = v_parent AND status = 'active';
  END IF;
  PERFORM {s}.budget_close(p_project, p_thread, v_parent, p_status);
  RETURN QUERY SELECT v_actual, v_reserved;
END $$;
-- The end of a thread that did not settle: what its active row recorded spent is charged to its parent.
CREATE FUNCTION {s}.budget_end(p_project text, p_thread text, p_status text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_row record;
BEGIN
  SELECT parent_thread_id, status, actual_spend INTO v_row FROM {s}.budget_ledger
  WHERE project = p_project AND thread_id = p_thread FOR UPDATE;
  IF NOT FOUND OR v_row.status <> 'active' THEN RETURN false; END IF;
  IF v_row.parent_thread_id IS NOT NULL THEN
    UPDATE {s}.budget_ledger SET actual_spend = actual_spend + v_row.actual_spend, updated_at = now()
    WHERE project = p_project AND thread_id = v_row.parent_thread_id AND status = 'active';
  END IF;
  PERFORM {s}.budget_close(p_project, p_thread, v_row.parent_thread_id, p_status);
  RETURN true;
END $$;
CREATE FUNCTION {s}.budget_release(p_project text, p_thread text, p_status text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_parent text;
BEGIN
  SELECT parent_thread_id INTO v_parent FROM {s}.budget_ledger
  WHERE project = p_project AND thread_id = p_thread FOR UPDATE;
  PERFORM {s}.budget_close(p_project, p_thread, v_parent, p_status);
END $$;
-- Every registry write wakes the stores waiting on this schema's channel. The payload is the
-- project's md5 (a payload has at most 8000 bytes; a key may be longer), told apart by the listener.
CREATE FUNCTION {s}.notify_registry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(TG_TABLE_SCHEMA || '_registry', md5(COALESCE(NEW.project, OLD.project)));
  RETURN NULL;
END $$;
CREATE TRIGGER threads_notify AFTER INSERT OR UPDATE OR DELETE ON {s}.threads
  FOR EACH ROW EXECUTE FUNCTION {s}.notify_registry();
`,
  },
  {
    version: 2,
    description: "copies of threads' signed files, for workers on other machines",
    sql: `
CREATE TABLE {s}.thread_records (
  project    text NOT NULL,
  thread_id  text NOT NULL,
  name       text NOT NULL CHECK (name IN ('thread.json', 'transcript.jsonl')),
  content    bytea NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (project, thread_id, name)
);
`,
  },
  {
    version: 3,
    description: 'a fencing token per run of a thread; spend never lowered at settle',
    sql: `
ALTER TABLE {s}.threads ADD COLUMN run_epoch bigint NOT NULL DEFAULT 0;
-- A run's own total at settle never lowers what its responses recorded as they came: two runs of
-- one thread (a worker that lost it, and the one that took it up) both charged what they used.
CREATE OR REPLACE FUNCTION {s}.budget_settle(p_project text, p_thread text, p_own numeric, p_status text)
  RETURNS TABLE (actual_spend numeric, reserved_spend numeric)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_parent text;
  v_actual numeric;
  v_reserved numeric;
BEGIN
  SELECT parent_thread_id INTO v_parent FROM {s}.budget_ledger
  WHERE project = p_project AND thread_id = p_thread FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  UPDATE {s}.budget_ledger b SET actual_spend = GREATEST(b.actual_spend, p_own + COALESCE((
      SELECT SUM(c.actual_spend) FROM {s}.budget_ledger c
      WHERE c.project = p_project AND c.parent_thread_id = p_thread AND c.status <> 'active'), 0)),
    updated_at = now()
  WHERE b.project = p_project AND b.thread_id = p_thread
  RETURNING b.actual_spend, b.reserved_spend INTO v_actual, v_reserved;
  IF v_parent IS NOT NULL THEN
    UPDATE {s}.budget_ledger SET actual_spend = actual_spend + v_actual, updated_at = now()
    WHERE project = p_project AND thread_id = v_parent AND status = 'active';
  END IF;
  PERFORM {s}.budget_close(p_project, p_thread, v_parent, p_status);
  RETURN QUERY SELECT v_actual, v_reserved;
END $$;
`,
  },
];

/** The LISTEN/NOTIFY channel of a schema's registry. */
export function channelOf(schema: string): string {
  return `${schema}_registry`;
}

/** The schema's migration version, read without a lock; 0 when it has none yet. */
async function currentVersion(db: Db, schema: string): Promise<number> {
  const [row] = await db.query<{ version: number | null }>(
    'store',
    'migrate',
    `SELECT CASE WHEN to_regclass($1) IS NULL THEN 0 END AS version`,
    [`"${schema}".schema_migrations`],
  );
  if (row?.version === 0) return 0;
  const [latest] = await db.query<{ version: number | null }>(
    'store',
    'migrate',
    `SELECT max(version) AS version FROM "${schema}".schema_migrations`,
  );
  return latest?.version ?? 0;
}

/** Brings `schema` up to the newest migration; safe to call from many processes at once. */
export async function migrate(db: Db, schema: string): Promise<void> {
  // The common case, a database already migrated, takes no lock: openers do not queue.
  if ((await currentVersion(db, schema)) === MIGRATIONS[MIGRATIONS.length - 1]!.version) return;
  const s = `"${schema}"`;
  await db.transaction('store', 'migrate', async (client) => {
    // Held until the transaction ends: concurrent openers queue here, then find nothing to do.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ryeos-store-postgres:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
      version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.schema_migrations`,
    );
    const current = rows[0]?.version ?? 0;
    const newest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
    if (current > newest) {
      throw new RyeError(
        'CONFIG',
        `The thread store schema "${schema}" is at version ${current}, newer than this @ryeos/store-postgres knows (${newest})`,
        {
          hint: 'Upgrade @ryeos/store-postgres on this machine to the version the other workers run.',
          details: { reason: 'schema_too_new', schema, version: current, known: newest },
        },
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.sql.replaceAll('{s}', s));
      await client.query(`INSERT INTO ${s}.schema_migrations (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
    }
  });
}
