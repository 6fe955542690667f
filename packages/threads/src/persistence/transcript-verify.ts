/**
 * Verifying `transcript.jsonl` (spec threads §10.3): every checkpoint's prefix hash, trusted key
 * and signature, and what follows the last checkpoint (`coordination.yaml transcript_integrity`).
 */
import { createHash } from 'node:crypto';
import { readRegularFile, TRANSCRIPT_MAX_BYTES } from './regular-file.js';
import type { Trust } from './signer.js';
import { checkSignature } from './signer.js';
import type { TranscriptEvent } from './transcript.js';

/** `coordination.yaml transcript_integrity`: trailing unsigned bytes fail (`strict`) or warn. */
export type TranscriptIntegrityMode = 'strict' | 'lenient';

/** What a caller that knows whose transcript it is can also require. */
export interface TranscriptVerifyOptions {
  /**
   * The thread the transcript must belong to: every complete line that is a JSON event must have
   * this `thread_id`, or the transcript is invalid (a signed transcript copied into another
   * thread's folder still verifies by its signatures alone).
   */
  threadId?: string;
  /**
   * A missing file, or one without any checkpoint, is invalid rather than "valid, unsigned". For
   * a finished thread (terminal status or turns > 0 in its thread.json): the runner always ends
   * its transcript with a checkpoint, so an unsigned one was replaced or truncated.
   */
  requireCheckpoint?: boolean;
  /** Largest transcript verified (its bytes are read whole); a larger one is refused with LIMIT. */
  maxBytes?: number;
  /**
   * The thread's signed thread.json says it ended: its transcript must hold the event the runner
   * writes as it ends (`thread_<status>`) under a checkpoint, or it was cut back to an earlier
   * checkpoint (which verifies on its own) and would hand a shortened conversation on.
   */
  requireEnd?: boolean;
}

export type TranscriptVerification =
  | {
      valid: true;
      /** How many checkpoints verified. */
      checkpoints: number;
      /** True when the transcript has no checkpoint (or no file): nothing to verify. */
      unsigned?: true;
      /** Lenient mode: what strict mode would have refused. */
      warnings?: string[];
    }
  | {
      valid: false;
      error: string;
      /** The turn of the checkpoint whose prefix, key or signature failed. */
      failed_at_turn?: number;
      /** Checkpoints that verified before the failure. */
      checkpoints: number;
      /** One-based line of the failing checkpoint. */
      line?: number;
      /** Bytes after the last checkpoint (strict). */
      trailing_bytes?: number;
    };

interface FoundCheckpoint {
  start: number;
  end: number;
  line: number;
  payload: Record<string, unknown>;
  /** Why a line that says it is a checkpoint cannot be read as one. */
  damaged?: string;
}

const CHECKPOINT_TYPE = /"event_type"\s*:\s*"checkpoint"/;
/** The event finalize writes just before the final checkpoint; matched on the raw line first. */
const END_TYPE = /"event_type"\s*:\s*"thread_(?:completed|error|cancelled|continued)"/;
const END_EVENTS = new Set(['thread_completed', 'thread_error', 'thread_cancelled', 'thread_continued']);

/** Whether a line before `end` is the thread's end event (its own top-level `event_type`, not a payload's). */
function hasEndEvent(bytes: Buffer, end: number): boolean {
  let start = 0;
  while (start < end) {
    const newline = bytes.indexOf(0x0a, start);
    const stop = newline === -1 || newline > end ? end : newline;
    const text = bytes.toString('utf8', start, stop);
    if (END_TYPE.test(text)) {
      try {
        const event = JSON.parse(text) as { event_type?: unknown };
        if (typeof event.event_type === 'string' && END_EVENTS.has(event.event_type)) return true;
      } catch {
        // A damaged line is no end event.
      }
    }
    start = stop + 1;
  }
  return false;
}
const TURN = /"turn"\s*:\s*(\d+)/g;

/**
 * Lines that declare `"event_type":"checkpoint"` (inside a JSON string the quotes would be
 * escaped, so event text cannot pose as one). A declared checkpoint that does not parse, or lacks
 * its newline, is damaged. A damaged one that a later checkpoint covers is plain data (that
 * checkpoint's hash catches the damage); the last one is reported, never skipped as trailing bytes.
 */
function findCheckpoints(bytes: Buffer): FoundCheckpoint[] {
  const found: FoundCheckpoint[] = [];
  let start = 0;
  let line = 1;
  while (start < bytes.length) {
    const newline = bytes.indexOf(0x0a, start);
    const stop = newline === -1 ? bytes.length : newline;
    const text = bytes.toString('utf8', start, stop);
    if (CHECKPOINT_TYPE.test(text)) {
      const candidate: FoundCheckpoint = { start, end: stop + 1, line, payload: {} };
      try {
        const event = JSON.parse(text) as Partial<TranscriptEvent>;
        if (event?.event_type !== 'checkpoint' || typeof event.payload !== 'object' || !event.payload)
          candidate.damaged = 'is not a checkpoint event';
        else candidate.payload = event.payload;
      } catch {
        candidate.damaged = 'is not valid JSON';
      }
      if (newline === -1) candidate.damaged ??= 'has no terminating newline';
      if (candidate.damaged) {
        // The last `"turn":N` of the line is the checkpoint's own (it follows any merged line).
        const turns = [...text.matchAll(TURN)];
        if (turns.length) candidate.payload = { turn: Number(turns.at(-1)![1]) };
      }
      found.push(candidate);
    }
    start = stop + 1;
    line += 1;
  }
  return found;
}

/**
 * The first complete line that is an event of another thread than `threadId` (or of none: an
 * event object without a string `thread_id`). A line that is not a JSON object is skipped: the
 * writer leaves a line cut by a crash as a line of its own, which later checkpoints cover and
 * `readTranscript` reports; it names no thread either way. An unterminated last fragment is
 * skipped too: it is trailing bytes, which the checkpoint rules judge, or a line being written.
 */
function foreignLine(bytes: Buffer, threadId: string): { line: number; error: string } | undefined {
  let start = 0;
  let line = 1;
  while (start < bytes.length) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline === -1) return undefined;
    let event: unknown;
    try {
      event = JSON.parse(bytes.toString('utf8', start, newline));
    } catch {
      event = undefined;
    }
    if (typeof event === 'object' && event !== null && !Array.isArray(event)) {
      const owner = (event as Record<string, unknown>).thread_id;
      if (owner !== threadId) {
        const said = typeof owner === 'string' ? `thread '${owner}'` : 'no thread (no string thread_id)';
        return {
          line,
          error: `line ${line} belongs to ${said}, not '${threadId}': the transcript is not this thread's`,
        };
      }
    }
    start = newline + 1;
    line += 1;
  }
  return undefined;
}

/**
 * Verifies every checkpoint of a transcript (prefix hash, trusted key, signature, and that it
 * records its own offset) and what follows the last one: any byte after it is invalid in
 * `strict` mode and a warning in `lenient` mode. No file, or no checkpoint: valid, unsigned —
 * unless `options.requireCheckpoint`. With `options.threadId`, every complete event line must be
 * that thread's (checked once the signatures hold, so a forged line reports as forged).
 */
export async function verifyTranscript(
  path: string,
  trust: Trust,
  mode: TranscriptIntegrityMode = 'strict',
  options: TranscriptVerifyOptions = {},
): Promise<TranscriptVerification> {
  const bytes = readRegularFile(path, options.maxBytes ?? TRANSCRIPT_MAX_BYTES);
  if (bytes === undefined) {
    if (options.requireCheckpoint)
      return {
        valid: false,
        error:
          'transcript.jsonl is missing, but the thread ran: a finished thread always has a signed transcript',
        checkpoints: 0,
      };
    return { valid: true, checkpoints: 0, unsigned: true };
  }
  const found = findCheckpoints(bytes);
  const checkpoints = found.filter((c, i) => !c.damaged || i === found.length - 1);
  if (checkpoints.length === 0) {
    if (options.requireCheckpoint)
      return {
        valid: false,
        error:
          'transcript.jsonl has no checkpoint, but the thread ran: a finished thread always ends its transcript with a signed checkpoint',
        checkpoints: 0,
      };
    const foreign = options.threadId === undefined ? undefined : foreignLine(bytes, options.threadId);
    if (foreign) return { valid: false, error: foreign.error, checkpoints: 0, line: foreign.line };
    return { valid: true, checkpoints: 0, unsigned: true };
  }

  const running = createHash('sha256');
  let hashed = 0;
  let verified = 0;
  for (const checkpoint of checkpoints) {
    const { turn, byte_offset: offset, hash, sig, fp } = checkpoint.payload;
    const at = typeof turn === 'number' ? { failed_at_turn: turn } : {};
    const fail = (error: string) =>
      ({ valid: false, error, ...at, checkpoints: verified, line: checkpoint.line }) as const;
    const where = `checkpoint at line ${checkpoint.line}${typeof turn === 'number' ? ` (turn ${turn})` : ''}`;
    if (checkpoint.damaged) return fail(`${where} is damaged: it ${checkpoint.damaged}`);
    if (
      typeof offset !== 'number' ||
      typeof hash !== 'string' ||
      !/^[a-f0-9]{64}$/.test(hash) ||
      typeof sig !== 'string' ||
      typeof fp !== 'string' ||
      !/^[a-f0-9]{16}$/.test(fp)
    ) {
      return fail(`${where} is malformed (needs byte_offset, a sha256 hash, sig and a 16-hex fp)`);
    }
    if (offset !== checkpoint.start)
      return fail(`${where} records byte_offset ${offset} but begins at byte ${checkpoint.start}`);
    running.update(bytes.subarray(hashed, checkpoint.start));
    hashed = checkpoint.start;
    const actual = running.copy().digest('hex');
    if (actual !== hash)
      return fail(
        `bytes before the ${where} were modified after it was signed (signed ${hash.slice(0, 16)}…, actual ${actual.slice(0, 16)}…)`,
      );
    const check = checkSignature(hash, sig, fp, trust);
    if (!check.ok) return fail(`${where} is ${check.reason}`);
    verified += 1;
  }

  if (options.threadId !== undefined) {
    const foreign = foreignLine(bytes, options.threadId);
    if (foreign) return { valid: false, error: foreign.error, checkpoints: verified, line: foreign.line };
  }

  const last = checkpoints.at(-1)!;
  if (options.requireEnd && !hasEndEvent(bytes, last.end)) {
    return {
      valid: false,
      error:
        'transcript.jsonl ends before the thread did: its thread.json says the thread ended, but no signed thread_<status> event closes it (cut back to an earlier checkpoint?)',
      checkpoints: verified,
      line: last.line,
    };
  }
  const trailing = bytes.length - last.end;
  if (trailing === 0) return { valid: true, checkpoints: verified };
  const lastTurn = typeof last.payload.turn === 'number' ? ` (turn ${last.payload.turn})` : '';
  const message = `${trailing} bytes after the last checkpoint${lastTurn} at line ${last.line} are not covered by a signature`;
  if (mode === 'lenient') return { valid: true, checkpoints: verified, warnings: [message] };
  return { valid: false, error: message, checkpoints: verified, trailing_bytes: trailing };
}
