/**
 * What a run leaves in the user's store: a fork's records as blobs under an `artifact_index`,
 * the result as a `state_snapshot`, and the `execution_snapshot` that names them all (the one
 * object the server signs). Stored only when the user's quota holds them all.
 */
import type { ArtifactIndex, ExecutionSnapshot, ObjectStore, StateSnapshot } from '@ryeos/executor';
import { canonicalJson } from '@ryeos/executor';
import type { ServerContext } from './context.js';
import { httpError } from './http.js';
import { checkQuota } from './objects.js';
import type { ResolvedRequest } from './request.js';
import { MAX_RECORD_BYTES, type RunOutcome } from './run.js';

/** Room for the artifact index and the execution snapshot, counted before they are built. */
const SNAPSHOT_ALLOWANCE_BYTES = 4096;

export interface StoredOutputs {
  snapshotHash: string;
  newObjects: string[];
}

/** Stores the run's records, result and snapshot, if the user's quota holds them all. */
export function storeOutputs(
  ctx: ServerContext,
  store: ObjectStore,
  threadId: string,
  request: ResolvedRequest,
  outcome: RunOutcome,
  requestHash: string,
): StoredOutputs {
  if (outcome.recordsOverLimit !== undefined) {
    checkQuota(ctx, store.sizeBytes(), outcome.recordsOverLimit);
    throw httpError(
      507,
      'LIMIT',
      `The run's records are over the ${MAX_RECORD_BYTES} bytes one run may bring back`,
      'Keep a thread’s records smaller; nothing of this run was stored.',
    );
  }
  const state: StateSnapshot = { schema: 1, kind: 'state_snapshot', state: { result: outcome.envelope } };
  const recordBytes = [...outcome.records.values()].reduce((sum, bytes) => sum + bytes.length, 0);
  const adding = recordBytes + Buffer.byteLength(canonicalJson(state)) + SNAPSHOT_ALLOWANCE_BYTES;
  checkQuota(ctx, store.sizeBytes(), adding);
  const newObjects: string[] = [];
  const entries: Record<string, string> = {};
  for (const [path, bytes] of outcome.records) {
    entries[path] = store.putBlob(bytes);
    newObjects.push(entries[path]);
  }
  let artifactIndexHash: string | undefined;
  if (outcome.records.size > 0) {
    const index: ArtifactIndex = { schema: 1, kind: 'artifact_index', thread_id: threadId, entries };
    artifactIndexHash = store.putObject(index);
    newObjects.push(artifactIndexHash);
  }
  const stateHash = store.putObject(state);
  newObjects.push(stateHash);
  const snapshotHash = store.putObject(
    executionSnapshot(ctx, threadId, request, outcome, stateHash, artifactIndexHash, requestHash),
  );
  newObjects.push(snapshotHash);
  return { snapshotHash, newObjects };
}

function executionSnapshot(
  ctx: ServerContext,
  threadId: string,
  request: ResolvedRequest,
  outcome: RunOutcome,
  stateHash: string,
  artifactIndexHash: string | undefined,
  requestHash: string,
): ExecutionSnapshot {
  const ok = outcome.envelope.status !== 'error';
  const error = outcome.envelope.error;
  return {
    schema: 1,
    kind: 'execution_snapshot',
    graph_run_id: threadId,
    graph_id: request.itemId,
    // Names the request this answers, so a client can tell a replayed answer from its own.
    request_hash: requestHash,
    project_manifest_hash: request.projectManifest,
    user_manifest_hash: request.userManifest,
    system_version: ctx.systemVersion,
    step: 1,
    status: ok ? 'completed' : 'error',
    state_hash: stateHash,
    node_receipts: [],
    ...(ok ? {} : { errors: [typeof error === 'string' ? error : 'the run failed'] }),
    ...(artifactIndexHash ? { artifact_index_hash: artifactIndexHash } : {}),
  };
}
