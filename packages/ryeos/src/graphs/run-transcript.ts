/**
 * A graph run's transcript, signed and read back. Checkpoints sign a message that names what it
 * is (`ryeos-graph-checkpoint`, the run id, the prefix hash), so no item signature (Ed25519 over a
 * bare sha256 hex) and no other run's checkpoint can stand in for one. Reading parses every line
 * once: the same parsed events are verified and then read, and a line that is not an event of
 * this run is refused, never skipped.
 */
import { createHash } from 'node:crypto';
import type { TrustStore } from '@ryeos/executor';
import { RyeError, verifyHashSignature } from '@ryeos/lillux';
import type { Signer } from '@ryeos/threads';

const CHECKPOINT_DOMAIN = 'ryeos-graph-checkpoint';
const REF_DOMAIN = 'ryeos-graph-ref';

/** Events after which a run is over for good (a cancelled run may be resumed). */
const FINAL_EVENTS = new Set(['graph_completed', 'graph_error']);

export function checkpointMessage(runId: string, prefixHash: string): string {
  return `${CHECKPOINT_DOMAIN}\n${runId}\n${prefixHash}`;
}

export function refMessage(runId: string, snapshotHash: string, checkpointHash: string): string {
  return `${REF_DOMAIN}\n${runId}\n${snapshotHash}\n${checkpointHash}`;
}

/** The signer a run's transcript writer gets: its checkpoints sign the domain message. */
export function checkpointSigner(signer: Signer, runId: string): Signer {
  return { fingerprint: signer.fingerprint, sign: (hash) => signer.sign(checkpointMessage(runId, hash)) };
}

export function refused(runId: string, why: string): RyeError {
  return new RyeError('INTEGRITY', `Graph run '${runId}' cannot be resumed: ${why}`, {
    hint: 'The run record was altered or copied after it was signed; start the graph again as a new run.',
  });
}

/** Whether `sig` by key `fp` signs `message` and the user (or the project) trusts that key. */
export function signedBy(message: string, sig: unknown, fp: unknown, trust: TrustStore): boolean {
  if (typeof sig !== 'string' || typeof fp !== 'string' || !/^[a-f0-9]{16}$/.test(fp)) return false;
  const key = trust.lookup(fp, 'project');
  return key !== undefined && verifyHashSignature(message, sig, key.publicKeyPem);
}

interface RunEvent {
  event_type: string;
  payload: Record<string, unknown>;
}

/** What the signed part of a run's transcript says. */
export interface SignedRun {
  graphId: string;
  graphHash: string;
  /** The snapshot of the last step a checkpoint covers. */
  snapshotHash: string;
  /** The prefix hash of the last checkpoint: the run's ref must name it. */
  checkpointHash: string;
  /** Bytes up to the end of the last checkpoint line. */
  signedBytes: number;
  /** `graph_completed` or `graph_error` when a checkpoint covers one: the run is over. */
  ended?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseEvent(runId: string, text: string, line: number): RunEvent {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw refused(runId, `line ${line} of its transcript is not JSON`);
  }
  if (!isRecord(event) || typeof event.event_type !== 'string' || !isRecord(event.payload))
    throw refused(runId, `line ${line} of its transcript is not an event`);
  if (event.thread_id !== runId) throw refused(runId, `line ${line} of its transcript is another run's`);
  return { event_type: event.event_type, payload: event.payload };
}

/**
 * Verifies a run's transcript and reads what its signed part says. A final line without its
 * newline (a walker killed mid-write) and whole events after the last checkpoint are unsigned:
 * they are left out (resume cuts them off). Throws INTEGRITY for anything else.
 */
export function readSignedRun(runId: string, bytes: Buffer, trust: TrustStore): SignedRun {
  const running = createHash('sha256');
  let hashed = 0;
  let signedBytes = 0;
  let checkpointHash: string | undefined;
  const signed: RunEvent[] = [];
  let pending: RunEvent[] = [];
  let line = 0;
  for (let start = 0; start < bytes.length; ) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline === -1) break;
    line += 1;
    const event = parseEvent(runId, bytes.toString('utf8', start, newline), line);
    if (event.event_type === 'checkpoint') {
      const { byte_offset: offset, hash, sig, fp } = event.payload;
      if (offset !== start) throw refused(runId, `the checkpoint at line ${line} is not where it says`);
      running.update(bytes.subarray(hashed, start));
      hashed = start;
      if (typeof hash !== 'string' || running.copy().digest('hex') !== hash)
        throw refused(runId, `the lines before line ${line} were changed after they were signed`);
      if (!signedBy(checkpointMessage(runId, hash), sig, fp, trust))
        throw refused(runId, `the checkpoint at line ${line} is not signed by a key you trust for this run`);
      signed.push(...pending);
      pending = [];
      signedBytes = newline + 1;
      checkpointHash = hash;
    } else {
      pending.push(event);
    }
    start = newline + 1;
  }
  return summarize(runId, signed, signedBytes, checkpointHash);
}

function summarize(
  runId: string,
  signed: RunEvent[],
  signedBytes: number,
  checkpointHash: string | undefined,
): SignedRun {
  const started = signed[0];
  const { graph_id: graphId, graph_hash: graphHash } = started?.payload ?? {};
  if (
    !checkpointHash ||
    started?.event_type !== 'graph_started' ||
    typeof graphId !== 'string' ||
    typeof graphHash !== 'string'
  ) {
    throw refused(runId, 'its transcript does not begin with a signed graph_started');
  }
  let snapshotHash: string | undefined;
  let ended: string | undefined;
  for (const event of signed) {
    const saved = event.event_type === 'graph_started' || event.event_type === 'step_completed';
    if (saved && typeof event.payload.snapshot_hash === 'string') snapshotHash = event.payload.snapshot_hash;
    if (FINAL_EVENTS.has(event.event_type)) ended ??= event.event_type;
  }
  if (!snapshotHash) throw refused(runId, 'its transcript has no signed step to continue from');
  return { graphId, graphHash, snapshotHash, checkpointHash, signedBytes, ...(ended ? { ended } : {}) };
}
