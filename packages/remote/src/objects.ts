/** `/objects/has|put|get` and `/push`: a user's store, and the projects they pushed into it. */
import { manifestClosure } from '@ryeos/executor';
import { isRyeError } from '@ryeos/lillux';
import type {
  RemoteGetResponse as GetResponse,
  RemoteHasResponse as HasResponse,
  RemotePushResponse as PushResponse,
  RemotePutResponse as PutResponse,
  TransportEntry,
  TransportKind,
} from 'ryeos';
import type { Caller, ServerContext } from './context.js';
import { recordPush } from './db.js';
import { httpError, Reply } from './http.js';
import { checkHash, hashList, userStore } from './user-store.js';
import { checkSystemVersion } from './version.js';

export function hasObjects(ctx: ServerContext, caller: Caller, body: Record<string, unknown>): HasResponse {
  const store = userStore(ctx.paths.casBase, caller.user.id);
  const present: string[] = [];
  const missing: string[] = [];
  for (const hash of hashList(body, 'hashes')) (store.has(hash) ? present : missing).push(hash);
  return { present, missing };
}

interface DecodedEntry {
  hash: string;
  kind: TransportKind;
  bytes: Buffer;
}

function decodeEntries(body: Record<string, unknown>): DecodedEntry[] {
  const entries = body.entries;
  if (!Array.isArray(entries)) {
    throw httpError(
      400,
      'VALIDATION',
      "'entries' must be a list",
      'Send {"entries": [{hash, kind, data}, …]}.',
    );
  }
  return entries.map((entry: Partial<TransportEntry>, index) => {
    const hash = checkHash(entry?.hash, `entries[${index}].hash`);
    if (entry.kind !== 'blob' && entry.kind !== 'object') {
      throw httpError(
        400,
        'VALIDATION',
        `entries[${index}].kind must be "blob" or "object"`,
        'Fix the entry.',
      );
    }
    if (typeof entry.data !== 'string') {
      throw httpError(400, 'VALIDATION', `entries[${index}].data must be base64 text`, 'Fix the entry.');
    }
    return { hash, kind: entry.kind, bytes: Buffer.from(entry.data, 'base64') };
  });
}

/**
 * Stores what the user sent. The quota is checked on everything new in the request before any
 * of it is written, so a refused put leaves the store as it was; an entry whose bytes do not hash
 * to its name is refused on its own (the rest are stored) and answered 400.
 */
export function putObjects(
  ctx: ServerContext,
  caller: Caller,
  body: Record<string, unknown>,
): Reply<PutResponse> {
  const entries = decodeEntries(body);
  const store = userStore(ctx.paths.casBase, caller.user.id);
  const incoming = entries
    .filter((entry) => !store.has(entry.hash))
    .reduce((sum, e) => sum + e.bytes.length, 0);
  checkQuota(ctx, store.sizeBytes(), incoming);
  const stored: string[] = [];
  const errors: Array<{ hash: string; error: string }> = [];
  for (const entry of entries) {
    try {
      store.putEntry(entry.hash, entry.kind, entry.bytes);
      stored.push(entry.hash);
    } catch (error) {
      if (!isRyeError(error)) throw error;
      errors.push({ hash: entry.hash, error: error.message });
    }
  }
  return errors.length ? new Reply(400, { stored, errors }) : new Reply(200, { stored });
}

export function checkQuota(ctx: ServerContext, current: number, adding: number): void {
  const limit = ctx.limits.maxUserStorageBytes;
  if (current + adding > limit) {
    throw httpError(
      507,
      'LIMIT',
      `Storing ${adding} more bytes would take this user's store over its quota of ${limit} bytes (${current} used)`,
      'Ask the operator to raise --max-user-storage-bytes; nothing of this request was stored.',
    );
  }
}

export function getObjects(ctx: ServerContext, caller: Caller, body: Record<string, unknown>): GetResponse {
  const store = userStore(ctx.paths.casBase, caller.user.id);
  const entries: TransportEntry[] = [];
  for (const hash of hashList(body, 'hashes')) {
    const entry = store.getEntry(hash);
    if (entry) entries.push({ hash, kind: entry.kind, data: entry.bytes.toString('base64') });
  }
  return { entries };
}

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function checkProjectName(name: unknown): string {
  if (typeof name !== 'string' || !PROJECT_NAME.test(name)) {
    throw httpError(
      400,
      'VALIDATION',
      `'project_name' must be 1-128 letters, digits, ".", "_" or "-", got ${JSON.stringify(name)?.slice(0, 80)}`,
      'Set project_name in remotes.yaml, or rename the project folder.',
    );
  }
  return name;
}

/** Both manifests and everything they name must be in the user's store: else a 400 naming what is missing. */
export function checkManifestsPresent(ctx: ServerContext, caller: Caller, hashes: string[]): void {
  const store = userStore(ctx.paths.casBase, caller.user.id);
  for (const hash of hashes) {
    try {
      manifestClosure(store, hash);
    } catch (error) {
      if (!isRyeError(error)) throw error;
      // A manifest of the wrong shape is present, just not a manifest: say that, not "missing".
      if (error.code === 'VALIDATION') throw httpError(400, 'VALIDATION', error.message, error.hint);
      throw httpError(
        400,
        'VALIDATION',
        `Manifest ${hash} is not fully present on the server: ${error.message}`,
        'Push again: put every object the manifest names before /push or /execute.',
      );
    }
  }
}

export function pushProject(ctx: ServerContext, caller: Caller, body: Record<string, unknown>): PushResponse {
  checkSystemVersion(body.system_version, ctx.systemVersion);
  const projectName = checkProjectName(body.project_name);
  const project = checkHash(body.project_manifest_hash, 'project_manifest_hash');
  const user = checkHash(body.user_manifest_hash, 'user_manifest_hash');
  checkManifestsPresent(ctx, caller, [project, user]);
  recordPush(ctx.db, caller.user.id, {
    remote_name: ctx.remoteName,
    project_name: projectName,
    project_manifest_hash: project,
    user_manifest_hash: user,
    system_version: String(body.system_version),
  });
  return {
    status: 'ok',
    remote_name: ctx.remoteName,
    project_name: projectName,
    project_manifest_hash: project,
    user_manifest_hash: user,
  };
}
