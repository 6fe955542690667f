/**
 * Moving store entries over the wire: `has` then `put` of only the missing ones in batches under
 * the body limit, and `get` whose every entry is checked against its hash before it is written.
 */
import type { ObjectStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { RemoteClient } from './http.js';
import type { TransportEntry } from './protocol.js';

/** One `put` carries at most this much base64 (well under any server's body limit). */
const PUT_BATCH_BYTES = 8 * 1024 * 1024;
/** Hashes per `has` or `get` call. */
const HASH_BATCH = 2000;

function batches<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < list.length; at += size) out.push(list.slice(at, at + size));
  return out;
}

/** The hashes of `hashes` the remote does not have. */
export async function missingOnRemote(client: RemoteClient, hashes: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const batch of batches(hashes, HASH_BATCH)) {
    const answer = await client.has(batch);
    const asked = new Set(batch);
    // Only hashes that were asked count: a server cannot make the client send anything else.
    for (const hash of answer.missing ?? []) if (asked.has(hash)) missing.push(hash);
  }
  return [...new Set(missing)];
}

/** Sends these entries of `store` (in order, children first); returns how many were sent. */
export async function putEntries(
  client: RemoteClient,
  store: ObjectStore,
  hashes: readonly string[],
): Promise<number> {
  let batch: TransportEntry[] = [];
  let size = 0;
  let sent = 0;
  const flush = async () => {
    if (!batch.length) return;
    const answer = await client.put(batch);
    if (answer.errors?.length) {
      throw new RyeError(
        'INTEGRITY',
        `The remote refused ${answer.errors.length} object(s): ${answer.errors[0]?.error}`,
        {
          hint: 'The local store may be damaged: remove .ai/state/objects and push again.',
        },
      );
    }
    sent += batch.length;
    batch = [];
    size = 0;
  };
  for (const hash of hashes) {
    const entry = store.getEntry(hash);
    if (!entry) throw new RyeError('NOT_FOUND', `Object ${hash} is not in the local store.`);
    const data = entry.bytes.toString('base64');
    if (size + data.length > PUT_BATCH_BYTES) await flush();
    batch.push({ hash, kind: entry.kind, data });
    size += data.length;
  }
  await flush();
  return sent;
}

export interface PullOutcome {
  /** Entries written into the local store by this pull. */
  pulled: string[];
  /** Asked for, and neither local nor on the remote. */
  missing: string[];
}

/**
 * Fetches the entries of `hashes` the local store lacks. Each is written only after its bytes
 * match its hash (`putEntry` refuses anything else, writing nothing), and only if it was asked.
 */
export async function pullEntries(
  client: RemoteClient,
  store: ObjectStore,
  hashes: readonly string[],
): Promise<PullOutcome> {
  const wanted = [...new Set(hashes)].filter((hash) => !store.has(hash));
  const pulled: string[] = [];
  for (const batch of batches(wanted, HASH_BATCH)) {
    const asked = new Set(batch);
    const answer = await client.get(batch);
    for (const entry of answer.entries ?? []) {
      if (!asked.has(entry.hash) || (entry.kind !== 'blob' && entry.kind !== 'object')) {
        throw new RyeError(
          'INTEGRITY',
          `The remote sent an entry that was not asked for (${String(entry.hash)}).`,
          {
            hint: 'Nothing of it was written. Do not use this server until its operator explains it.',
          },
        );
      }
      asked.delete(entry.hash);
      store.putEntry(entry.hash, entry.kind, Buffer.from(entry.data, 'base64'));
      pulled.push(entry.hash);
    }
  }
  return { pulled, missing: wanted.filter((hash) => !store.has(hash)) };
}
