/**
 * A thread database must hold exactly the schema its store creates. The files live in the
 * project, which a cloned repository controls: `CREATE TABLE IF NOT EXISTS` would keep a planted
 * table with its triggers or views (one that inflates a parent's remaining budget on every
 * update, say), so an existing file is compared, object by object and SQL text by SQL text, with
 * the schema the store's own `init` produces in an empty in-memory database.
 */
import { statSync } from 'node:fs';
import { RyeError } from '@ryeos/lillux';
import type { SqliteDatabase as Database, SqliteDriver } from './sqlite-driver.js';

/** One row of `sqlite_schema`: a table, index, trigger or view, with the SQL that made it. */
interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** An object of the reference schema, with its parsed columns (tables only). */
interface ReferenceObject extends SchemaObject {
  columns: string;
}

const references = new WeakMap<(db: Database) => void, ReferenceObject[]>();

function readSchema(db: Database): SchemaObject[] {
  return db
    .prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name')
    .all() as SchemaObject[];
}

/** What `init` creates in an empty database, computed once per process. */
function referenceSchema(Driver: SqliteDriver, init: (db: Database) => void): ReferenceObject[] {
  let schema = references.get(init);
  if (!schema) {
    const memory = new Driver(':memory:');
    try {
      init(memory);
      schema = readSchema(memory).map((object) => ({ ...object, columns: columnsOf(memory, object) }));
    } finally {
      memory.close();
    }
    references.set(init, schema);
  }
  return schema;
}

const key = (object: SchemaObject): string => `${object.type} ${object.name}`;

/**
 * Refuses a file that holds an object the store never creates (a trigger, a view, another
 * table). Call before anything writes to the file (even `journal_mode`), so a refusal leaves it
 * byte for byte as it was.
 */
export function refuseForeignObjects(
  Driver: SqliteDriver,
  db: Database,
  path: string,
  init: (db: Database) => void,
): void {
  const present = readSchema(db);
  if (present.length === 0) return;
  const known = new Set(referenceSchema(Driver, init).map(key));
  const foreign = present.find((object) => !known.has(key(object)));
  if (foreign) throw notOurs(path, `it holds a ${foreign.type} ${foreign.name} that rye does not create`);
}

/**
 * Runs `init` (creation or migration) on `db`, then refuses the file if its schema differs in
 * any way from the one `init` creates in an empty database. Call inside the transaction that runs
 * `init`, so a refusal rolls the migration back.
 */
export function initVerifiedSchema(
  Driver: SqliteDriver,
  db: Database,
  path: string,
  init: (db: Database) => void,
): void {
  if (readSchema(db).length === 0) {
    init(db);
    return;
  }
  try {
    init(db);
  } catch (error) {
    throw notOurs(path, `its schema could not be brought up to date (${(error as Error).message})`);
  }
  const after = new Map(readSchema(db).map((object) => [key(object), object]));
  for (const expected of referenceSchema(Driver, init)) {
    const found = after.get(key(expected));
    if (
      !found ||
      found.tbl_name !== expected.tbl_name ||
      normalize(found.sql) !== normalize(expected.sql) ||
      columnsOf(db, found) !== expected.columns
    ) {
      throw notOurs(path, `its ${expected.type} ${expected.name} differs from the one rye creates`);
    }
  }
  refuseInconsistentContent(db, path);
}

/** Files this process already found consistent, by identity (a replaced file is checked again). */
const consistent = new Set<string>();

/**
 * An index whose SQL text was rewritten (writable_schema) passes the schema check but answers
 * queries from other columns; `integrity_check` compares every index with its table (`quick_check`
 * does not). It reads the whole file, so each file is checked once per process, not per open.
 */
function refuseInconsistentContent(db: Database, path: string): void {
  const stat = statSync(path, { bigint: true });
  const identity = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}`;
  if (consistent.has(identity)) return;
  const verdict = db.pragma('integrity_check(1)', { simple: true });
  if (verdict !== 'ok') throw notOurs(path, `its content is inconsistent (${String(verdict)})`);
  consistent.add(identity);
}

/**
 * SQLite keeps each statement's text as written, and older versions wrote the same table with
 * other layout, so whitespace is ignored; `columnsOf` still tells literals that differ only there.
 */
function normalize(sql: string | null): string | null {
  return sql === null ? null : sql.replace(/\s+/g, '');
}

/** A table's columns as SQLite parsed them: name, type, NOT NULL, default, key, hidden. */
function columnsOf(db: Database, object: SchemaObject): string {
  if (object.type !== 'table') return '';
  return JSON.stringify(db.pragma(`table_xinfo(${JSON.stringify(object.name)})`));
}

function notOurs(path: string, why: string): RyeError {
  return new RyeError('INTEGRITY', `Refusing to open the thread database ${path}: ${why}`, {
    hint: `This file was not made by rye (a repository can ship one). Move it away (for example: mv ${path} ${path}.untrusted) and run again: rye creates a fresh database.`,
    details: { path },
  });
}
