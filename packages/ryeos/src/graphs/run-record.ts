/**
 * A graph run's durable record: a checkpoint-signed `transcript.jsonl` under
 * `.ai/state/graphs/<run_id>/`, and after every step an `execution_snapshot` (with its state
 * and node receipts) in the project's object store, named by `refs/graphs/<run_id>.json`.
 *
 * The ref is an unsigned mutable file, so resume believes it only when the signed transcript's
 * last step names the same snapshot: the signature, not the ref, is what vouches for the state.
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { CasObject, ObjectStore, TrustStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { Signer } from '@ryeos/threads';
import { TranscriptWriter, verifyTranscript } from '@ryeos/threads';
import { takeRunLock } from './run-lock.js';

export const GRAPHS_STATE_DIR = '.ai/state/graphs';
const RUN_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/** What a step leaves behind, enough to continue after it. */
export interface GraphCheckpoint {
  graph_run_id: string;
  graph_id: string;
  graph_hash: string;
  step: number;
  status: string;
  /** The node to run next; absent once the run has ended. */
  next_node?: string;
  state: Record<string, unknown>;
  node_receipts: string[];
  /** The step before's snapshot: each snapshot links back through the whole run. */
  previous_snapshot?: string;
  errors: string[];
}

export function checkRunId(runId: string): string {
  if (!RUN_ID.test(runId) || runId.includes('..')) {
    throw new RyeError('VALIDATION', `Invalid graph run id '${runId}'`, {
      hint: 'A run id is letters, digits, dot, dash and underscore, as `rye graphs` lists them.',
    });
  }
  return runId;
}

export function runDir(projectPath: string, runId: string): string {
  return join(projectPath, GRAPHS_STATE_DIR, checkRunId(runId));
}

function refPath(store: ObjectStore, runId: string): string {
  return join(store.root, 'refs', 'graphs', `${checkRunId(runId)}.json`);
}

/**
 * Points the run's ref at a snapshot: temp file and rename, synchronously, so it never queues
 * behind the transcript's background fsyncs on the I/O thread pool.
 */
function writeRef(path: string, hash: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify({ hash })}\n`, { flag: 'wx', mode: 0o600 });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export class RunRecord {
  readonly transcript: TranscriptWriter;

  constructor(
    readonly runId: string,
    readonly dir: string,
    private readonly store: ObjectStore,
    signer: Signer,
    private readonly release: () => void,
  ) {
    this.transcript = new TranscriptWriter(join(dir, 'transcript.jsonl'), runId, signer, { coalesceMs: 0 });
  }

  event(type: string, payload: Record<string, unknown>): void {
    this.transcript.write(type, payload);
    // Every graph event is a step boundary fact: written now, not coalesced.
    this.transcript.flush();
  }

  putObject(value: CasObject): string {
    return this.store.putObject(value);
  }

  /**
   * Stores the step's snapshot, points the ref at it, and signs the transcript up to and
   * including the `step_completed` line that names it.
   */
  async checkpoint(
    point: GraphCheckpoint,
    event: Record<string, unknown>,
    eventType: 'graph_started' | 'step_completed' = 'step_completed',
  ): Promise<string> {
    const stateHash = this.store.putObject({ schema: 1, kind: 'state_snapshot', state: point.state });
    const snapshot = {
      schema: 1 as const,
      kind: 'execution_snapshot',
      graph_run_id: point.graph_run_id,
      graph_id: point.graph_id,
      graph_hash: point.graph_hash,
      project_manifest_hash: null,
      user_manifest_hash: null,
      system_version: '1',
      step: point.step,
      status: point.status,
      state_hash: stateHash,
      node_receipts: point.node_receipts,
      ...(point.next_node ? { next_node: point.next_node } : {}),
      ...(point.previous_snapshot ? { previous_snapshot: point.previous_snapshot } : {}),
      ...(point.errors.length ? { errors: point.errors } : {}),
    };
    const hash = this.store.putObject(snapshot);
    writeRef(refPath(this.store, this.runId), hash);
    this.transcript.write(eventType, { ...event, step: point.step, snapshot_hash: hash });
    // Signed now; made durable off the event loop. A killed process loses no completed step (the
    // bytes are written); a power cut may lose the last few, which then run again on resume.
    this.transcript.checkpointInBackground(point.step);
    return hash;
  }

  /** Writes the final checkpoint and waits until every checkpoint is on disk. */
  async close(): Promise<void> {
    try {
      this.transcript.close();
      await this.transcript.durable();
    } finally {
      this.release();
    }
  }
}

/** Opens the record of a new run (its folder must not exist: run ids are never reused). */
export function createRunRecord(
  projectPath: string,
  runId: string,
  store: ObjectStore,
  signer: Signer,
): RunRecord {
  const dir = runDir(projectPath, runId);
  if (existsSync(join(dir, 'transcript.jsonl'))) {
    throw new RyeError('VALIDATION', `Graph run '${runId}' already exists`, {
      hint: `Resume it with \`rye graphs resume ${runId}\`, or start a new run.`,
    });
  }
  return new RunRecord(runId, dir, store, signer, takeRunLock(dir, runId));
}

interface SavedRun {
  checkpoint: GraphCheckpoint;
  snapshotHash: string;
  /** Bytes of the transcript the last checkpoint covers. */
  signedBytes: number;
}

function refused(runId: string, why: string): RyeError {
  return new RyeError('INTEGRITY', `Graph run '${runId}' cannot be resumed: ${why}`, {
    hint: 'The run record was altered or copied after it was signed; start the graph again as a new run.',
  });
}

/** The last signed `step_completed` of a verified transcript, and where its checkpoint ends. */
function lastSignedStep(runId: string, bytes: Buffer): { snapshotHash: string; signedBytes: number } {
  let offset = 0;
  let signedBytes = 0;
  let pending: string | undefined;
  let snapshotHash: string | undefined;
  for (const line of bytes.toString('utf8').split('\n')) {
    const end = offset + Buffer.byteLength(line) + 1;
    offset = end;
    let event: { event_type?: string; payload?: Record<string, unknown> };
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    const saved = event.event_type === 'step_completed' || event.event_type === 'graph_started';
    if (saved && typeof event.payload?.snapshot_hash === 'string') {
      pending = event.payload.snapshot_hash;
    } else if (event.event_type === 'checkpoint') {
      signedBytes = end;
      if (pending) snapshotHash = pending;
    } else if (['graph_completed', 'graph_error', 'graph_cancelled'].includes(event.event_type ?? '')) {
      pending = undefined;
    }
  }
  if (!snapshotHash) throw refused(runId, 'its transcript has no signed step to continue from');
  return { snapshotHash, signedBytes };
}

/** Verifies a run's transcript and reads the snapshot it vouches for. */
export async function readSavedRun(
  projectPath: string,
  runId: string,
  store: ObjectStore,
  trust: TrustStore,
): Promise<SavedRun> {
  const path = join(runDir(projectPath, runId), 'transcript.jsonl');
  if (!existsSync(path)) {
    throw new RyeError('NOT_FOUND', `No graph run '${runId}' in this project`, {
      hint: 'List runs with `rye threads list`, or check the project path.',
    });
  }
  // Lenient: a run killed mid-step leaves unsigned lines after its last checkpoint; only signed
  // lines are read below, and the unsigned tail is cut before the run continues.
  const verified = await verifyTranscript(path, trust, 'lenient', {
    threadId: runId,
    requireCheckpoint: true,
  });
  if (!verified.valid) throw refused(runId, `its transcript does not verify (${verified.error})`);
  const { snapshotHash, signedBytes } = lastSignedStep(runId, readFileSync(path));
  let ref: unknown;
  try {
    ref = JSON.parse(readFileSync(refPath(store, runId), 'utf8'));
  } catch {
    throw refused(runId, 'its snapshot ref is missing or unreadable');
  }
  if ((ref as { hash?: unknown })?.hash !== snapshotHash) {
    throw refused(runId, 'its snapshot ref does not name the last signed step');
  }
  const snapshot = store.getObject<Record<string, unknown>>(snapshotHash);
  const state =
    typeof snapshot?.state_hash === 'string'
      ? store.getObject<Record<string, unknown>>(snapshot.state_hash)
      : undefined;
  if (!snapshot || !state || snapshot.graph_run_id !== runId) {
    throw refused(runId, 'its snapshot is missing from the object store');
  }
  return {
    checkpoint: {
      graph_run_id: runId,
      graph_id: String(snapshot.graph_id),
      graph_hash: String(snapshot.graph_hash),
      step: Number(snapshot.step),
      status: String(snapshot.status),
      ...(typeof snapshot.next_node === 'string' ? { next_node: snapshot.next_node } : {}),
      state: structuredClone(state.state) as Record<string, unknown>,
      node_receipts: [...((snapshot.node_receipts as string[]) ?? [])],
      errors: [...((snapshot.errors as string[]) ?? [])],
    },
    snapshotHash,
    signedBytes,
  };
}

/**
 * Opens a saved run to continue it, under the lock its caller took before reading it: its
 * unsigned tail (a step cut short) is dropped first.
 */
export function reopenRunRecord(
  projectPath: string,
  runId: string,
  signedBytes: number,
  store: ObjectStore,
  signer: Signer,
  release: () => void,
): RunRecord {
  const dir = runDir(projectPath, runId);
  truncateSync(join(dir, 'transcript.jsonl'), signedBytes);
  return new RunRecord(runId, dir, store, signer, release);
}

/** Takes the lock of an existing run (before its record is read, so nobody appends meanwhile). */
export function lockSavedRun(projectPath: string, runId: string): () => void {
  const dir = runDir(projectPath, runId);
  if (!existsSync(join(dir, 'transcript.jsonl'))) {
    throw new RyeError('NOT_FOUND', `No graph run '${runId}' in this project`, {
      hint: 'Check the run id (the graph_run_id a run answered with) and the project path.',
    });
  }
  return takeRunLock(dir, runId);
}
