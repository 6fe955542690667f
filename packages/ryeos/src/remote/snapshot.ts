/**
 * What comes back from a remote run is believed only as far as the server's pinned key vouches
 * for it: the signature over the execution snapshot's hash, then everything the snapshot names,
 * each entry checked against its hash before it is written into the local store.
 */
import { verify } from 'node:crypto';
import type { ObjectStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { RemoteClient } from './http.js';
import type { RemotePin } from './pin.js';
import { snapshotSigningText } from './protocol.js';
import { pullEntries } from './transfer.js';

/** The fields of an `execution_snapshot` the client follows. */
interface ExecutionSnapshot {
  kind: string;
  graph_run_id?: string;
  state_hash?: string;
  artifact_index_hash?: string;
  node_receipts?: string[];
}

const HASH = /^[0-9a-f]{64}$/;

export function verifySnapshotSignature(
  pin: RemotePin,
  snapshotHash: string,
  signature: string,
  remoteName: string,
): void {
  let ok = false;
  try {
    ok =
      HASH.test(snapshotHash) &&
      verify(
        null,
        Buffer.from(snapshotSigningText(snapshotHash)),
        pin.publicKeyPem,
        Buffer.from(signature, 'base64'),
      );
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new RyeError(
      'INTEGRITY',
      `Remote '${remoteName}' answered with an execution snapshot its pinned key (${pin.fingerprint}) did not sign.`,
      { hint: 'Nothing of the run was written locally. Do not trust this result; ask the server operator.' },
    );
  }
}

export interface PulledRun {
  /** The run's result as the signed state snapshot holds it (undefined when it holds none). */
  signedResult: unknown;
  /** The remote thread the snapshot is of (its `graph_run_id`). */
  threadId: string | undefined;
  objectsPulled: number;
}

/**
 * Pulls the signed snapshot and what it names (state, artifact index and its blobs, receipts);
 * hashes the server listed that the snapshot does not reach are not pulled: nothing signs them.
 */
export async function pullSignedRun(
  client: RemoteClient,
  store: ObjectStore,
  snapshotHash: string,
): Promise<PulledRun> {
  let pulled = 0;
  const fetch = async (hashes: string[]) => {
    const outcome = await pullEntries(
      client,
      store,
      hashes.filter((hash) => HASH.test(hash)),
    );
    pulled += outcome.pulled.length;
    if (outcome.missing.length) {
      throw new RyeError(
        'NOT_FOUND',
        `The remote does not have ${outcome.missing.length} object(s) its signed snapshot names.`,
        {
          hint: 'The server may have lost them (a full disk?): ask its operator.',
        },
      );
    }
  };
  await fetch([snapshotHash]);
  const snapshot = store.getObject<ExecutionSnapshot>(snapshotHash);
  if (snapshot?.kind !== 'execution_snapshot') {
    throw new RyeError('INTEGRITY', `Object ${snapshotHash} is not an execution snapshot.`);
  }
  const named = [snapshot.state_hash, snapshot.artifact_index_hash, ...(snapshot.node_receipts ?? [])];
  await fetch(named.filter((hash): hash is string => typeof hash === 'string'));
  const index = snapshot.artifact_index_hash
    ? store.getObject<{ entries?: Record<string, string> }>(snapshot.artifact_index_hash)
    : undefined;
  await fetch(Object.values(index?.entries ?? {}));
  const state = snapshot.state_hash
    ? store.getObject<{ state?: { result?: unknown } }>(snapshot.state_hash)
    : undefined;
  return { signedResult: state?.state?.result, threadId: snapshot.graph_run_id, objectsPulled: pulled };
}
