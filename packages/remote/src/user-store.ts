/**
 * Each user's own content-addressed store, `<casBase>/<user id>/.ai/state/objects`, and the checks
 * every hash a client sends goes through before it names a file.
 */
import { join } from 'node:path';
import { isHash, ObjectStore } from '@ryeos/executor';
import { httpError } from './http.js';

const stores = new Map<string, ObjectStore>();

/** One store per user for the server's life: it keeps its byte count as it writes (the quota). */
export function userStore(casBase: string, userId: string): ObjectStore {
  const root = join(casBase, userId);
  let store = stores.get(root);
  if (!store) {
    store = ObjectStore.ofSpace(root);
    stores.set(root, store);
  }
  return store;
}

/** `body[field]` as a list of hashes (64 lowercase hex each), else a 400 naming the first bad one. */
export function hashList(body: Record<string, unknown>, field: string): string[] {
  const list = body[field];
  if (!Array.isArray(list)) {
    throw httpError(
      400,
      'VALIDATION',
      `'${field}' must be a list of hashes`,
      'Send {"' + field + '": ["<64 hex>", …]}.',
    );
  }
  for (const hash of list) checkHash(hash, field);
  return list as string[];
}

export function checkHash(hash: unknown, field: string): string {
  if (!isHash(hash)) {
    throw httpError(
      400,
      'VALIDATION',
      `'${field}' holds ${JSON.stringify(hash)?.slice(0, 80)}, not a SHA-256 hash`,
      'A hash is 64 lowercase hex digits.',
    );
  }
  return hash;
}
