/**
 * A graph run's durable record: a checkpoint-signed `transcript.jsonl` under
 * `.ai/state/graphs/<run_id>/`, and after every step an `execution_snapshot` (with its state
 * and node receipts) in the project's object store, named by `refs/graphs/<run_id>.json`.
 *
 * The ref is signed too and names the snapshot and the transcript's last checkpoint, so resume
 * believes a run only when both agree: a transcript cut back to an earlier checkpoint (which
 * verifies on its own) no longer matches the ref, which only the walker can sign.
 */
import {
  closeSync,
  constants,
  existsSync,
  ftruncateSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { type CasObject, canonicalJson, ObjectStore, type TrustStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { Signer } from '@ryeos/threads';
import { ensureAiSubdir, TranscriptWriter } from '@ryeos/threads';
import { takeRunLock } from './run-lock.js';
import { checkpointSigner, readSignedRun, refMessage, refused, signedBy } from './run-transcript.js';

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

/** The run's folder, made 0700; refused (INTEGRITY) when a folder on the way is a symlink. */
function ensureRunDir(projectPath: string, runId: string): string {
  return ensureAiSubdir(join(projectPath, '.ai'), ['state', 'graphs', checkRunId(runId)]);
}

function refPath(projectPath: string, runId: string): string {
  return join(projectPath, '.ai', 'state', 'objects', 'refs', 'graphs', `${checkRunId(runId)}.json`);
}

interface SignedRef {
  hash: string;
  checkpoint: string;
  sig: string;
  fp: string;
}

/**
 * The run's signed ref, kept open for the run and rewritten in place after every step: one
 * write of a record whose length never changes (hashes, an Ed25519 signature and a fingerprint
 * have fixed lengths), synchronously, so it never queues behind the transcript's background
 * fsyncs and costs no new file per step. Opened without following a symlink.
 */
class RefWriter {
  private readonly fd: number;

  constructor(
    projectPath: string,
    private readonly runId: string,
    private readonly signer: Signer,
  ) {
    ensureAiSubdir(join(projectPath, '.ai'), ['state', 'objects', 'refs', 'graphs']);
    const flags = constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);
    this.fd = openSync(refPath(projectPath, runId), flags, 0o600);
  }

  write(hash: string, checkpoint: string): void {
    const { sig, fp } = this.signer.sign(refMessage(this.runId, hash, checkpoint));
    const ref: SignedRef = { hash, checkpoint, sig, fp };
    const bytes = Buffer.from(`${JSON.stringify(ref)}\n`);
    writeSync(this.fd, bytes, 0, bytes.length, 0);
    ftruncateSync(this.fd, bytes.length);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Sets an own property, even one named `__proto__` (a state key is the graph author's name). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A state value whose canonical JSON is at most this long sits in the step's state object. */
const INLINE_VALUE_CHARS = 1024;

/** One top-level state key in a step's `graph_state`: its value, or the hash of an object holding it. */
type StateEntry = { value: unknown } | { hash: string };

export class RunRecord {
  readonly transcript: TranscriptWriter;
  /** The entry last stored for each state key, by the value it was stored for. */
  private readonly stored = new Map<string, { value: unknown; entry: StateEntry }>();
  private readonly ref: RefWriter;

  constructor(
    projectPath: string,
    readonly runId: string,
    readonly dir: string,
    private readonly store: ObjectStore,
    signer: Signer,
    private readonly release: () => void,
    /** The last step's snapshot (a resumed run's saved one). */
    private lastSnapshot?: string,
  ) {
    this.transcript = new TranscriptWriter(
      join(dir, 'transcript.jsonl'),
      runId,
      checkpointSigner(signer, runId),
      { coalesceMs: 0 },
    );
    this.ref = new RefWriter(projectPath, runId, signer);
  }

  /**
   * The step's state as a `graph_state` object: each top-level key's value inline when small,
   * else in an object of its own. A value the walker did not replace since the last step (the
   * walker assigns new values, never edits them in place) keeps its entry, so a large input is
   * stored once per run, not once per step.
   */
  private stateObject(state: Record<string, unknown>): string {
    const entries: Record<string, StateEntry> = {};
    for (const [key, value] of Object.entries(state)) {
      const known = this.stored.get(key);
      let entry = known && known.value === value ? known.entry : undefined;
      if (!entry) {
        const text = canonicalJson(value ?? null);
        entry =
          text.length <= INLINE_VALUE_CHARS
            ? { value: value ?? null }
            : { hash: this.store.putObject({ schema: 1, kind: 'graph_state_value', value: value ?? null }) };
        this.stored.set(key, { value, entry });
      }
      setOwn(entries, key, entry);
    }
    return this.store.putObject({ schema: 1, kind: 'graph_state', entries });
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
    const stateHash = this.stateObject(point.state);
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
    this.transcript.write(eventType, { ...event, step: point.step, snapshot_hash: hash });
    // Signed now; made durable off the event loop. A killed process loses no completed step (the
    // bytes are written); a power cut may lose the last few, which then run again on resume.
    const signed = this.transcript.checkpointInBackground(point.step);
    this.lastSnapshot = hash;
    this.ref.write(hash, signed.hash);
    return hash;
  }

  /** Writes the final checkpoint (the ref names it) and waits until every checkpoint is on disk. */
  async close(): Promise<void> {
    try {
      const final = this.transcript.close();
      if (final && this.lastSnapshot) this.ref.write(this.lastSnapshot, final.hash);
      await this.transcript.durable();
    } finally {
      this.ref.close();
      this.release();
    }
  }
}

/** The project's object store, its folders from `.ai` down checked real (no symlink) first. */
export function projectStore(projectPath: string): ObjectStore {
  ensureAiSubdir(join(projectPath, '.ai'), ['state', 'objects']);
  return ObjectStore.ofSpace(projectPath);
}

/** Opens the record of a new run (its folder must not exist: run ids are never reused). */
export function createRunRecord(
  projectPath: string,
  runId: string,
  store: ObjectStore,
  signer: Signer,
): RunRecord {
  const dir = ensureRunDir(projectPath, runId);
  if (existsSync(join(dir, 'transcript.jsonl'))) {
    throw new RyeError('VALIDATION', `Graph run '${runId}' already exists`, {
      hint: `Resume it with \`rye graphs resume ${runId}\`, or start a new run.`,
    });
  }
  return new RunRecord(projectPath, runId, dir, store, signer, takeRunLock(dir, runId));
}

export interface SavedRun {
  checkpoint: GraphCheckpoint;
  snapshotHash: string;
  /** Bytes of the transcript the last checkpoint covers. */
  signedBytes: number;
}

function readRef(projectPath: string, runId: string, trust: TrustStore): SignedRef {
  let ref: Partial<SignedRef>;
  try {
    ref = JSON.parse(readFileSync(refPath(projectPath, runId), 'utf8')) as Partial<SignedRef>;
  } catch {
    throw refused(runId, 'its snapshot ref is missing or unreadable');
  }
  if (
    typeof ref?.hash !== 'string' ||
    typeof ref.checkpoint !== 'string' ||
    !signedBy(refMessage(runId, ref.hash, ref.checkpoint), ref.sig, ref.fp, trust)
  ) {
    throw refused(runId, 'its snapshot ref is not signed by a key you trust');
  }
  return ref as SignedRef;
}

/** A step's state back from its `graph_state` object, or undefined when a part is missing. */
function readState(store: ObjectStore, hash: string): Record<string, unknown> | undefined {
  const object = store.getObject<{ kind?: string; entries?: Record<string, StateEntry> }>(hash);
  if (object?.kind !== 'graph_state' || typeof object.entries !== 'object' || object.entries === null) return;
  const state: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(object.entries)) {
    if (typeof entry !== 'object' || entry === null) return undefined;
    if ('hash' in entry && typeof entry.hash === 'string') {
      const held = store.getObject<{ kind?: string; value?: unknown }>(entry.hash);
      if (held?.kind !== 'graph_state_value') return undefined;
      setOwn(state, key, structuredClone(held.value));
    } else if ('value' in entry) setOwn(state, key, structuredClone(entry.value));
    else return undefined;
  }
  return state;
}

/**
 * Verifies a run's transcript and ref, and reads the snapshot they vouch for. Refuses a run that
 * ended (a signed graph_completed or graph_error), and one whose ref and transcript disagree.
 */
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
  const run = readSignedRun(runId, readFileSync(path), trust);
  if (run.ended) {
    throw new RyeError('VALIDATION', `Graph run '${runId}' has already ended (${run.ended})`, {
      hint: 'Start the graph again for a new run.',
    });
  }
  const ref = readRef(projectPath, runId, trust);
  if (ref.checkpoint !== run.checkpointHash || ref.hash !== run.snapshotHash) {
    throw refused(runId, 'its snapshot ref does not name the last signed step (cut back or altered?)');
  }
  const snapshot = store.getObject<Record<string, unknown>>(run.snapshotHash);
  const state = typeof snapshot?.state_hash === 'string' ? readState(store, snapshot.state_hash) : undefined;
  if (!snapshot || !state) throw refused(runId, 'its snapshot is missing from the object store');
  if (
    snapshot.graph_run_id !== runId ||
    snapshot.graph_id !== run.graphId ||
    snapshot.graph_hash !== run.graphHash
  ) {
    throw refused(runId, 'its snapshot belongs to another run or graph than its signed start');
  }
  return {
    checkpoint: {
      graph_run_id: runId,
      graph_id: run.graphId,
      graph_hash: run.graphHash,
      step: Number(snapshot.step),
      status: String(snapshot.status),
      ...(typeof snapshot.next_node === 'string' ? { next_node: snapshot.next_node } : {}),
      state,
      node_receipts: [...((snapshot.node_receipts as string[]) ?? [])],
      errors: [...((snapshot.errors as string[]) ?? [])],
    },
    snapshotHash: run.snapshotHash,
    signedBytes: run.signedBytes,
  };
}

/**
 * Opens a saved run to continue it, under the lock its caller took before reading it: its
 * unsigned tail (a step cut short) is dropped first.
 */
export function reopenRunRecord(
  projectPath: string,
  runId: string,
  saved: SavedRun,
  store: ObjectStore,
  signer: Signer,
  release: () => void,
): RunRecord {
  const dir = ensureRunDir(projectPath, runId);
  truncateSync(join(dir, 'transcript.jsonl'), saved.signedBytes);
  return new RunRecord(projectPath, runId, dir, store, signer, release, saved.snapshotHash);
}

/** Takes the lock of an existing run (before its record is read, so nobody appends meanwhile). */
export function lockSavedRun(projectPath: string, runId: string): () => void {
  if (!existsSync(join(runDir(projectPath, runId), 'transcript.jsonl'))) {
    throw new RyeError('NOT_FOUND', `No graph run '${runId}' in this project`, {
      hint: 'Check the run id (the graph_run_id a run answered with) and the project path.',
    });
  }
  return takeRunLock(ensureRunDir(projectPath, runId), runId);
}
