/**
 * What a thread is asked to do and what it answers: the contract of every way a thread runs,
 * kept apart from the runner so the operations that start threads (resume, the orchestrator) can
 * name it without importing the runner they are handed.
 */
import type { ErrorType, Fix } from '@ryeos/lillux';
import type { ThreadHost } from './host.js';
import type { PreparedThread } from './prepared.js';
import type { LimitCode, ThreadErrorCode } from './result-codes.js';
import type { LoopTiming } from './runner/loop.js';
import type { ThreadCost, ThreadStatus } from './store/types.js';

export interface ForkRequest {
  /** The directive id (without `directive:`). */
  directiveId: string;
  inputs?: Record<string, unknown>;
  model?: string;
  limitOverrides?: Record<string, unknown>;
  /** The thread that asked for this one (its `thread.json` caps limits and capabilities). */
  parentThreadId?: string;
  signal?: AbortSignal;
  /**
   * Run detached (`async: true`, spec §11): setup runs here, through the signed `thread.json`;
   * then `detach` hands `prepared` to the process that runs the loop (`runPreparedThread`) and
   * answers its pid. It calls `recordPid` before the hand-over, and the hand-over is its last step
   * that can fail: if it throws, no process runs the thread.
   */
  detach?: (
    threadId: string,
    prepared: PreparedThread,
    recordPid: (pid: number) => Promise<void> | void,
  ) => Promise<number>;
  /**
   * Run here (no `detach`): told the setup once it is done, before the loop starts, so a host can
   * get ready for what the thread may do (a runner for its first async child). Must not throw.
   */
  onPrepared?: (prepared: PreparedThread) => void;
  /** A continuation (handoff or resume) of this finished thread: its conversation carries on. */
  previousThreadId?: string;
  /** The user message a continuation starts with (resume's `message`). */
  continuationMessage?: string;
  /** A continuation made by a handoff (the old thread filled its context window), not a resume. */
  handoff?: boolean;
  /** An id its caller registered for this thread (a handoff's continuation, named in the old record). */
  registeredId?: string;
  /**
   * Told each event this thread writes to its transcript, as it writes it (a run here only; a
   * detached run's watchers read its transcript). Must not throw, and must be quick.
   */
  onEvent?: (eventType: string, payload: Readonly<Record<string, unknown>>) => void;
  /** A W3C `traceparent` the thread's spans continue (a run handed over from another process). */
  traceParent?: string;
}

/** What a thread ended with; a failed one says why as `error`, `error_type` and its codes. */
export interface ThreadResult {
  success: boolean;
  status: ThreadStatus;
  thread_id?: string;
  directive: string;
  result?: string;
  outputs?: Record<string, unknown>;
  cost: ThreadCost;
  error?: string;
  hint?: string;
  /** What fixes the error, as data (each caller's layer renders it). */
  fix?: Fix;
  /** The closed set of every envelope; present on every failure. */
  error_type?: ErrorType;
  /** The limit that stopped the thread. */
  limit_code?: LimitCode;
  /** A refusal of the runner's own (a chain too long, required outputs missing). */
  error_code?: ThreadErrorCode;
  result_truncated?: boolean;
  /** Where the thread's wall time went (a thread whose loop ran). */
  timing?: LoopTiming;
  /** Setup's warnings (an unpriced model, say). */
  warnings?: string[];
  /** Handed back between turns (its worker stopped): still running, for another process to take up. */
  handed_back?: true;
  /** A queued run stopped because another worker took its thread up: nothing of it was recorded. */
  taken_over?: true;
  /** Detached (`ForkRequest.detach`): the thread runs on in the process with this pid. */
  async?: true;
  pid?: number;
  /** A thread that handed off: the id of its continuation. */
  continuation_thread_id?: string;
  /** A chain of continuations the caller waited through: every thread id in order, and the last. */
  chain_thread_ids?: string[];
  final_thread_id?: string;
  /** A limit's or provider failure's context, for the caller and the `limit`/`error` hooks. */
  error_context?: Record<string, unknown>;
  recent_llm_errors?: Record<string, unknown>[];
  /** The required outputs a thread stopped by a limit still owed. */
  missing_outputs?: string[];
  /** A `limit` hook's own message, beside the limit's. */
  hook_error?: string;
  /** A control hook stopped the thread: `abort`, `suspend`, or `escalate` (suspended too). */
  aborted?: boolean;
  suspended?: boolean;
  escalated?: boolean;
  /** The risk assessment that blocked a capability. */
  risk?: unknown;
}

/** Runs a thread from request to final record (`runThread`). */
export type RunThread = (host: ThreadHost, request: ForkRequest) => Promise<ThreadResult>;
