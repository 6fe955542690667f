/**
 * The server's own database (SQLite, under its data dir): users, their API keys (SHA-256 only),
 * their secrets, the projects they pushed and the remote threads they ran. One module owns the
 * schema; every other module goes through these functions.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { RyeError } from '@ryeos/lillux';
import Database from 'better-sqlite3';
import type { RemoteItemType, RemoteThreadRow } from 'ryeos';
import { API_KEY_PREFIX } from 'ryeos';

export type RemoteDb = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS secrets (
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (user_id, name)
);
CREATE TABLE IF NOT EXISTS projects (
  user_id TEXT NOT NULL REFERENCES users(id),
  remote_name TEXT NOT NULL,
  project_name TEXT NOT NULL,
  project_manifest_hash TEXT NOT NULL,
  user_manifest_hash TEXT NOT NULL,
  system_version TEXT NOT NULL,
  pushed_at TEXT NOT NULL,
  PRIMARY KEY (user_id, remote_name, project_name)
);
CREATE TABLE IF NOT EXISTS threads (
  thread_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  project_name TEXT,
  item_type TEXT NOT NULL,
  item_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  execution_snapshot_hash TEXT
);
CREATE INDEX IF NOT EXISTS threads_by_user ON threads (user_id, created_at);
`;

/** Opens (and creates, 0600) the database; WAL so the CLI can manage keys while a server runs. */
export function openRemoteDb(path: string): RemoteDb {
  // The wait applies from the first statement: another process (the server, a second CLI) may
  // hold the lock while this one switches to WAL or creates the schema.
  const db = new Database(path, { timeout: 5000 });
  chmodSync(path, 0o600);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);
  return db;
}

const now = () => new Date().toISOString();

/** User names are what an operator types; the id (a path component of the store) is random. */
const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

export interface RemoteUser {
  id: string;
  name: string;
}

function checkUserName(name: string): void {
  if (!USER_NAME.test(name)) {
    throw new RyeError('VALIDATION', `Invalid user name '${name}'`, {
      hint: 'Use 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit.',
    });
  }
}

export function findUser(db: RemoteDb, name: string): RemoteUser | undefined {
  return db.prepare('SELECT id, name FROM users WHERE name = ?').get(name) as RemoteUser | undefined;
}

export function requireUser(db: RemoteDb, name: string): RemoteUser {
  checkUserName(name);
  const user = findUser(db, name);
  if (!user) {
    throw new RyeError('NOT_FOUND', `No user '${name}' on this server`, {
      hint: 'Create the user with its first key: ryeos-remote keys create --user NAME',
    });
  }
  return user;
}

function ensureUser(db: RemoteDb, name: string): { user: RemoteUser; created: boolean } {
  checkUserName(name);
  const existing = findUser(db, name);
  if (existing) return { user: existing, created: false };
  const user = { id: `u${randomBytes(8).toString('hex')}`, name };
  db.prepare('INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)').run(user.id, user.name, now());
  return { user, created: true };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface CreatedKey {
  key: string;
  key_id: string;
  user: string;
  user_created: boolean;
  name: string;
  expires_at: string | null;
}

export function createApiKey(
  db: RemoteDb,
  options: { user: string; name?: string; expiresDays?: number },
): CreatedKey {
  const days = options.expiresDays;
  if (days !== undefined && !(Number.isFinite(days) && days > 0)) {
    throw new RyeError('VALIDATION', `--expires-days must be a positive number, got '${days}'`, {
      hint: 'Pass a number of days such as 30, or leave it out for a key that does not expire.',
    });
  }
  // Immediate: it takes the write lock first, so a concurrent writer makes it wait (a deferred
  // transaction that read first would fail with SQLITE_BUSY instead of waiting).
  return db
    .transaction(() => {
      const { user, created } = ensureUser(db, options.user);
      const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
      const keyId = `k${randomBytes(6).toString('hex')}`;
      const expiresAt = days === undefined ? null : new Date(Date.now() + days * 86_400_000).toISOString();
      const name = options.name ?? 'default';
      db.prepare(
        'INSERT INTO api_keys (id, user_id, name, key_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(keyId, user.id, name, hashApiKey(key), now(), expiresAt);
      return { key, key_id: keyId, user: user.name, user_created: created, name, expires_at: expiresAt };
    })
    .immediate();
}

export interface ListedKey {
  key_id: string;
  user: string;
  name: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export function listApiKeys(db: RemoteDb, user?: string): ListedKey[] {
  const select = `SELECT k.id AS key_id, u.name AS user, k.name, k.created_at, k.expires_at, k.revoked_at
    FROM api_keys k JOIN users u ON u.id = k.user_id`;
  return (
    user === undefined
      ? db.prepare(`${select} ORDER BY u.name, k.created_at`).all()
      : db.prepare(`${select} WHERE u.id = ? ORDER BY k.created_at`).all(requireUser(db, user).id)
  ) as ListedKey[];
}

export function revokeApiKey(db: RemoteDb, keyId: string): { key_id: string; revoked_at: string } {
  const at = now();
  const changed = db
    .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
    .run(at, keyId).changes;
  if (changed === 0) {
    const known = db.prepare('SELECT revoked_at FROM api_keys WHERE id = ?').get(keyId) as
      | { revoked_at: string }
      | undefined;
    if (!known) {
      throw new RyeError('NOT_FOUND', `No API key '${keyId}'`, {
        hint: 'List the key ids with: ryeos-remote keys list',
      });
    }
    return { key_id: keyId, revoked_at: known.revoked_at };
  }
  return { key_id: keyId, revoked_at: at };
}

/** The user a presented key belongs to, when the key is known, not revoked and not expired. */
export function userOfApiKey(db: RemoteDb, key: string): RemoteUser | undefined {
  const row = db
    .prepare(
      `SELECT u.id, u.name, k.expires_at, k.revoked_at FROM api_keys k JOIN users u ON u.id = k.user_id
       WHERE k.key_hash = ?`,
    )
    .get(hashApiKey(key)) as
    | (RemoteUser & { expires_at: string | null; revoked_at: string | null })
    | undefined;
  if (!row || row.revoked_at !== null) return undefined;
  if (row.expires_at !== null && Date.parse(row.expires_at) <= Date.now()) return undefined;
  return { id: row.id, name: row.name };
}

/** Names a run's environment sets itself: a secret may not replace them. */
const RESERVED_SECRET = /^(PATH|HOME|TMPDIR|TMP|TEMP|LANG|USER_SPACE|NODE_OPTIONS|LD_.*|DYLD_.*|RYE_.*)$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function checkSecretName(name: string): void {
  if (!SECRET_NAME.test(name)) {
    throw new RyeError('VALIDATION', `Invalid secret name '${name}'`, {
      hint: 'A secret is an environment variable name: letters, digits and "_", not starting with a digit.',
    });
  }
  if (RESERVED_SECRET.test(name)) {
    throw new RyeError('VALIDATION', `'${name}' is set by the server for every run and cannot be a secret`, {
      hint: 'Pick another name (PATH, HOME, TMPDIR, LANG, USER_SPACE, NODE_OPTIONS, LD_*, DYLD_* and RYE_* are reserved).',
    });
  }
}

export function setSecret(db: RemoteDb, user: string, name: string, value: string): void {
  checkSecretName(name);
  const { id } = requireUser(db, user);
  db.prepare(
    `INSERT INTO secrets (user_id, name, value, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ).run(id, name, value, now());
}

export function listSecretNames(db: RemoteDb, user: string): Array<{ name: string; updated_at: string }> {
  const { id } = requireUser(db, user);
  return db.prepare('SELECT name, updated_at FROM secrets WHERE user_id = ? ORDER BY name').all(id) as Array<{
    name: string;
    updated_at: string;
  }>;
}

export function deleteSecret(db: RemoteDb, user: string, name: string): void {
  checkSecretName(name);
  const { id } = requireUser(db, user);
  if (db.prepare('DELETE FROM secrets WHERE user_id = ? AND name = ?').run(id, name).changes === 0) {
    throw new RyeError('NOT_FOUND', `User '${user}' has no secret '${name}'`, {
      hint: `List them with: ryeos-remote secrets list --user ${user}`,
    });
  }
}

/** One user's secrets, as the environment of their runs gets them. */
export function secretsOf(db: RemoteDb, userId: string): Record<string, string> {
  const rows = db.prepare('SELECT name, value FROM secrets WHERE user_id = ?').all(userId) as Array<{
    name: string;
    value: string;
  }>;
  return Object.fromEntries(
    rows.filter((row) => !RESERVED_SECRET.test(row.name)).map((r) => [r.name, r.value]),
  );
}

export interface PushedProject {
  project_manifest_hash: string;
  user_manifest_hash: string;
}

export function recordPush(
  db: RemoteDb,
  userId: string,
  push: PushedProject & { remote_name: string; project_name: string; system_version: string },
): void {
  db.prepare(
    `INSERT INTO projects (user_id, remote_name, project_name, project_manifest_hash, user_manifest_hash, system_version, pushed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id, remote_name, project_name) DO UPDATE SET
       project_manifest_hash = excluded.project_manifest_hash, user_manifest_hash = excluded.user_manifest_hash,
       system_version = excluded.system_version, pushed_at = excluded.pushed_at`,
  ).run(
    userId,
    push.remote_name,
    push.project_name,
    push.project_manifest_hash,
    push.user_manifest_hash,
    push.system_version,
    now(),
  );
}

export function pushedProject(
  db: RemoteDb,
  userId: string,
  remoteName: string,
  projectName: string,
): PushedProject | undefined {
  return db
    .prepare(
      `SELECT project_manifest_hash, user_manifest_hash FROM projects
       WHERE user_id = ? AND remote_name = ? AND project_name = ?`,
    )
    .get(userId, remoteName, projectName) as PushedProject | undefined;
}

export function startThreadRow(
  db: RemoteDb,
  row: {
    thread_id: string;
    user_id: string;
    project_name: string | null;
    item_type: RemoteItemType;
    item_id: string;
  },
): void {
  db.prepare(
    `INSERT INTO threads (thread_id, user_id, project_name, item_type, item_id, status, created_at)
     VALUES (?, ?, ?, ?, ?, 'running', ?)`,
  ).run(row.thread_id, row.user_id, row.project_name, row.item_type, row.item_id, now());
}

export function finishThreadRow(
  db: RemoteDb,
  threadId: string,
  status: 'completed' | 'error',
  snapshotHash: string | null,
): void {
  db.prepare(
    'UPDATE threads SET status = ?, finished_at = ?, execution_snapshot_hash = ? WHERE thread_id = ?',
  ).run(status, now(), snapshotHash, threadId);
}

const THREAD_COLUMNS =
  'thread_id, project_name, item_type, item_id, status, created_at, finished_at, execution_snapshot_hash';

export function listThreadRows(
  db: RemoteDb,
  userId: string,
  options: { limit: number; projectName?: string },
): RemoteThreadRow[] {
  return (
    options.projectName === undefined
      ? db
          .prepare(
            `SELECT ${THREAD_COLUMNS} FROM threads WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
          )
          .all(userId, options.limit)
      : db
          .prepare(
            `SELECT ${THREAD_COLUMNS} FROM threads WHERE user_id = ? AND project_name = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
          )
          .all(userId, options.projectName, options.limit)
  ) as RemoteThreadRow[];
}

/** A thread row of this user only: another user's id reads as unknown. */
export function threadRow(db: RemoteDb, userId: string, threadId: string): RemoteThreadRow | undefined {
  return db
    .prepare(`SELECT ${THREAD_COLUMNS} FROM threads WHERE user_id = ? AND thread_id = ?`)
    .get(userId, threadId) as RemoteThreadRow | undefined;
}

/** Rows a stopped server left `running` are not running any more. */
export function failInterruptedThreads(db: RemoteDb): number {
  return db
    .prepare("UPDATE threads SET status = 'error', finished_at = ? WHERE status = 'running'")
    .run(now()).changes;
}
