/**
 * `transcript.jsonl` (spec threads §10.2, §10.3, §9 "Criticality"): one JSON event per line,
 * appended with one `write` each, and signed checkpoints that cover every byte before them.
 *
 * The final checkpoint must be the very last write, or strict verification of every finished
 * thread fails (the reference wrote `thread_<status>` after it: [BUG] §10.3). So the writer ends
 * only through `finish(finalEvents)` or `close()`, both of which write that checkpoint last, and
 * every write after them throws.
 */
import type { Hash } from 'node:crypto';
import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { Signer } from './signer.js';
import { signedAt } from './signer.js';

export const TRANSCRIPT_JSONL = 'transcript.jsonl';

export interface TranscriptEvent<P extends Record<string, unknown> = Record<string, unknown>> {
  /** Epoch seconds (float). */
  timestamp: number;
  thread_id: string;
  event_type: string;
  payload: P;
}

/** What a writer is asked to append; the writer adds timestamp and thread id. */
export interface EventInput {
  event_type: string;
  payload: Record<string, unknown>;
}

export interface CheckpointPayload {
  turn: number;
  /** File size before the checkpoint line: where the line begins. */
  byte_offset: number;
  /** sha256 hex of bytes [0, byte_offset). */
  hash: string;
  /** Ed25519 over the ASCII bytes of `hash`, base64url with padding. */
  sig: string;
  fp: string;
  /** ISO timestamp to the second. */
  ts: string;
}

/**
 * Events written synchronously (events.yaml `criticality: critical`). Everything else (deltas,
 * reasoning, unknown types) is droppable: buffered, coalesced, and flushed on a timer, before the
 * next critical event and before every checkpoint.
 */
export const CRITICAL_EVENTS: ReadonlySet<string> = new Set([
  'thread_started',
  'system_prompt',
  'context_injected',
  'cognition_in',
  'cognition_out',
  'response_usage',
  'tool_call_start',
  'tool_call_result',
  'checkpoint_saved',
  'directive_return',
  'context_limit_reached',
  'thread_handoff',
  'thread_resumed',
  'thread_resumed_run',
  'thread_completed',
  'thread_error',
  'thread_cancelled',
  'thread_continued',
  'thread_finalized',
  'retry_attempt',
  'error_classified',
  'limit_escalation_requested',
  'child_thread_started',
  'capabilities_attenuated',
]);

/** Droppable event types whose consecutive lines of one turn merge into one (their text joined). */
const COALESCED = new Set(['cognition_out_delta', 'cognition_reasoning', 'token_delta', 'tool_output']);

/** Buffered droppable bytes that are written at once instead of waiting for the window to end. */
const FLUSH_PENDING_BYTES = 64 * 1024;

/** Droppable bytes one writer records before it drops the rest (a chatty tool must not fill the disk). */
export const DEFAULT_DROPPABLE_CAP_BYTES = 8 * 1024 * 1024;

/** The one line written in place of every droppable event past the cap. */
export const LIVE_EVENTS_CAPPED = 'live_events_capped';

export interface TranscriptWriterOptions {
  /** Milliseconds since the epoch (tests pin it). */
  now?: () => number;
  /** Coalescing window for droppable events (events.yaml `throttle_seconds: 0.1`). */
  coalesceMs?: number;
  /** Override of the critical set (from `events.yaml`). */
  critical?: ReadonlySet<string>;
  /** Droppable bytes recorded at most; later droppable events are dropped (one notice says so). */
  droppableCapBytes?: number;
}

function closedError(path: string): RyeError {
  return new RyeError(
    'INTERNAL',
    `Cannot write to ${path}: the transcript was finished and its final checkpoint must stay the last line`,
    { hint: 'Pass final events to finish(finalEvents) so they are written before the final checkpoint.' },
  );
}

/** Appends events to one thread's `transcript.jsonl`. Not shared across processes. */
export class TranscriptWriter {
  private fd: number | undefined;
  /** Running sha256 of the file's bytes, so a checkpoint costs O(new bytes), not O(file). */
  private running: Hash;
  private size: number;
  /** End of the last checkpoint line this writer wrote (or found), i.e. bytes already covered. */
  private coveredUpTo = 0;
  private lastTurn = 0;
  private pending: TranscriptEvent[] = [];
  /** The fsync of the last background checkpoint, while it runs. */
  private syncing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A failure of a timer flush, surfaced by the next write. */
  private deferred: unknown;
  private readonly now: () => number;
  private readonly coalesceMs: number;
  private readonly critical: ReadonlySet<string>;
  private readonly droppableCap: number;
  /** Serialized bytes of droppable events accepted so far, and of those still buffered. */
  private droppableBytes = 0;
  private pendingBytes = 0;
  private capped = false;

  constructor(
    readonly path: string,
    readonly threadId: string,
    private readonly signer: Signer,
    options: TranscriptWriterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.coalesceMs = options.coalesceMs ?? 100;
    this.critical = options.critical ?? CRITICAL_EVENTS;
    this.droppableCap = options.droppableCapBytes ?? DEFAULT_DROPPABLE_CAP_BYTES;
    let existing: Buffer;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      this.fd = openSync(path, 'a', 0o600);
      // Continuing an existing file (a re-entered async child): hash what is there once.
      existing = fstatSync(this.fd).size > 0 ? readFileSync(path) : Buffer.alloc(0);
    } catch (cause) {
      if (this.fd !== undefined) closeSync(this.fd);
      throw new RyeError('INTERNAL', `Cannot open ${path} for appending: ${(cause as Error).message}`, {
        cause,
        hint: 'Check the permissions of .ai/state/threads/.',
      });
    }
    this.running = createHash('sha256').update(existing);
    this.size = existing.length;
    // A line cut short by a crash stays a (corrupt) line of its own, not glued to the next event.
    if (existing.length > 0 && existing[existing.length - 1] !== 0x0a) this.appendBytes(Buffer.from('\n'));
  }

  get closed(): boolean {
    return this.fd === undefined;
  }

  isCritical(eventType: string): boolean {
    return this.critical.has(eventType);
  }

  /** Appends an event: at once when critical, else buffered for up to `coalesceMs`. */
  write(eventType: string, payload: Record<string, unknown>): void {
    if (this.fd === undefined) throw closedError(this.path);
    this.raiseDeferred();
    const event: TranscriptEvent = {
      timestamp: this.now() / 1000,
      thread_id: this.threadId,
      event_type: eventType,
      payload,
    };
    if (typeof payload.turn === 'number' && Number.isFinite(payload.turn)) this.lastTurn = payload.turn;
    if (this.isCritical(eventType)) {
      // Buffered droppables first: the file stays in the order events happened.
      this.flush();
      this.append(event);
      return;
    }
    this.buffer(event);
  }

  private buffer(event: TranscriptEvent): void {
    if (this.capped) return;
    const size = droppableSize(event);
    if (this.droppableBytes + size > this.droppableCap) {
      this.capped = true;
      this.pending.push({
        ...event,
        event_type: LIVE_EVENTS_CAPPED,
        payload: {
          cap_bytes: this.droppableCap,
          message: `Live events past ${this.droppableCap} bytes were not recorded; the thread's results are.`,
        },
      });
      this.flush();
      return;
    }
    this.droppableBytes += size;
    this.pendingBytes += size;
    const last = this.pending.at(-1);
    if (last && mergeable(last, event)) {
      last.payload = { ...last.payload, text: `${String(last.payload.text)}${String(event.payload.text)}` };
    } else {
      this.pending.push(event);
    }
    if (this.pendingBytes >= FLUSH_PENDING_BYTES) {
      this.flush();
      return;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        try {
          this.flush();
        } catch (error) {
          this.deferred = error;
        }
      }, this.coalesceMs);
      this.timer.unref();
    }
  }

  /** Writes buffered droppable events now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.fd === undefined) return;
    const pending = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    for (const event of pending) this.append(event);
  }

  private raiseDeferred(): void {
    if (this.deferred === undefined) return;
    const error = this.deferred;
    this.deferred = undefined;
    throw error;
  }

  /** One event, one `write` (looped only if the kernel accepts part of it). */
  private append(event: TranscriptEvent): void {
    let line: Buffer;
    try {
      line = Buffer.from(`${JSON.stringify(event)}\n`, 'utf8');
    } catch (cause) {
      throw new RyeError('VALIDATION', `Cannot record ${event.event_type}: its payload is not JSON`, {
        cause,
      });
    }
    this.appendBytes(line);
  }

  private appendBytes(line: Buffer): void {
    try {
      let done = 0;
      while (done < line.length) done += writeSync(this.fd!, line, done, line.length - done);
    } catch (cause) {
      throw new RyeError('INTERNAL', `Cannot append to ${this.path}: ${(cause as Error).message}`, {
        cause,
        hint: 'Check free disk space and the permissions of .ai/state/threads/.',
      });
    }
    this.running.update(line);
    this.size += line.length;
  }

  /**
   * Flushes droppables, then appends a signed checkpoint covering every byte before it (written
   * at the start of every turn after the first, and immediately before a handoff).
   */
  checkpoint(turn: number = this.lastTurn): CheckpointPayload {
    const payload = this.appendCheckpoint(turn);
    // A checkpoint is a promise about the bytes on disk: make it durable.
    fsyncSync(this.fd!);
    return payload;
  }

  /**
   * A checkpoint whose fsync runs off the event loop, so the next model request need not wait
   * for the disk; whatever has effects (a tool call) waits for `durable()` first, so no call runs
   * before the results it follows are on disk.
   */
  checkpointInBackground(turn: number = this.lastTurn): CheckpointPayload {
    const payload = this.appendCheckpoint(turn);
    const fd = this.fd!;
    // One fsync at a time on the descriptor, so the last one done is the last one started.
    const previous = (this.syncing ?? Promise.resolve()).catch(() => undefined);
    const syncing = new Promise<void>((resolve, reject) => {
      const sync = () =>
        fsync(fd, (error) => {
          if (this.syncing === syncing) this.syncing = undefined;
          if (!error) return resolve();
          const failure = new RyeError('INTERNAL', `Cannot make ${this.path} durable: ${error.message}`, {
            cause: error,
            hint: 'Check the disk holding .ai/state/threads/ (free space, errors in the system log).',
          });
          // The next write raises it too, so the thread ends on it.
          this.deferred ??= failure;
          reject(failure);
        });
      void previous.then(sync);
    });
    // A failure is the next call's and the next write's to report, never an unhandled rejection.
    syncing.catch(() => undefined);
    this.syncing = syncing;
    return payload;
  }

  /** Resolves once every checkpoint written so far is on disk; rejects when its fsync failed. */
  durable(): Promise<void> {
    return this.syncing ?? Promise.resolve();
  }

  private appendCheckpoint(turn: number): CheckpointPayload {
    if (this.fd === undefined) throw closedError(this.path);
    this.raiseDeferred();
    this.flush();
    const size = fstatSync(this.fd).size;
    if (size !== this.size) {
      // Someone else appended: the running hash no longer describes the file.
      this.running = createHash('sha256').update(readFileSync(this.path).subarray(0, size));
      this.size = size;
    }
    const hash = this.running.copy().digest('hex');
    const { sig, fp } = this.signer.sign(hash);
    const payload: CheckpointPayload = {
      turn,
      byte_offset: size,
      hash,
      sig,
      fp,
      ts: signedAt(new Date(this.now())),
    };
    this.append({
      timestamp: this.now() / 1000,
      thread_id: this.threadId,
      event_type: 'checkpoint',
      payload: { ...payload },
    });
    this.coveredUpTo = this.size;
    this.lastTurn = turn;
    return payload;
  }

  /**
   * The normal end of a thread: writes the final events (`thread_<status>`, `thread_finalized`,
   * …), then the final checkpoint, and closes. Nothing can be written afterwards.
   */
  finish(finalEvents: readonly EventInput[] = [], turn?: number): CheckpointPayload | undefined {
    if (this.fd === undefined) throw closedError(this.path);
    for (const event of finalEvents) this.write(event.event_type, event.payload);
    return this.close(turn);
  }

  /**
   * Flushes, writes a final checkpoint when any byte is not yet covered by one, and closes. Safe
   * to call twice; every later write throws. Returns the final checkpoint, if one was written.
   */
  close(turn?: number): CheckpointPayload | undefined {
    if (this.fd === undefined) return undefined;
    let final: CheckpointPayload | undefined;
    try {
      this.flush();
      const size = fstatSync(this.fd).size;
      if (size > this.coveredUpTo) final = this.checkpoint(turn ?? this.lastTurn);
    } finally {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.pending = [];
      const fd = this.fd;
      this.fd = undefined;
      // A background fsync still holds the descriptor: close it once that is done.
      if (this.syncing) void this.syncing.catch(() => undefined).finally(() => closeSync(fd));
      else closeSync(fd);
    }
    return final;
  }
}

/**
 * What a droppable event costs against the cap: the bytes its text (or whole payload) takes once
 * written, since JSON escapes a control character to six bytes and UTF-8 takes up to four.
 */
function droppableSize(event: TranscriptEvent): number {
  const text = event.payload.text;
  return Buffer.byteLength(JSON.stringify(typeof text === 'string' ? text : event.payload) ?? '', 'utf8');
}

function mergeable(last: TranscriptEvent, next: TranscriptEvent): boolean {
  if (last.event_type !== next.event_type || !COALESCED.has(next.event_type)) return false;
  if (last.payload.turn !== next.payload.turn) return false;
  // One call's output and one stream of it per line: interleaved calls stay apart.
  if (last.payload.call_id !== next.payload.call_id || last.payload.stream !== next.payload.stream)
    return false;
  // A partial reasoning block written on a stream error is a record of its own.
  const flags = (p: Record<string, unknown>) => p.is_partial !== undefined || p.was_interrupted !== undefined;
  return !flags(last.payload) && !flags(next.payload) && typeof next.payload.text === 'string';
}
