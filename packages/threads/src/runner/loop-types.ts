/**
 * What the turn loop is given and what it answers: everything it touches arrives in
 * `LoopContext`, so it knows no file layout, database or wire format.
 */
import type { ErrorClassification } from '../hooks/errors.js';
import type { PrimaryDispatch } from '../host.js';
import type { ChatMessage, LanguageModel, ProviderCallErrorInfo } from '../provider/types.js';
import type { LimitCode, ThreadErrorCode } from '../result-codes.js';
import type { ThreadCost } from '../store/types.js';
import type { TextToolParser } from '../streaming/text-parser.js';
import type { OutputSpec, Permission } from './calls.js';
import type { DispatchSettings } from './dispatcher.js';
import type { Palette } from './palette.js';
import type { ResultGuard } from './result-guard.js';
import type { StreamMode } from './stream-turn.js';
import type { ThreadSpans } from './thread-spans.js';

export type { ErrorClassification };

/** A transcript as the loop sees it. */
export interface ThreadLog {
  emit(eventType: string, payload: Record<string, unknown>): void;
  /** Flushes droppable events, then appends a signed checkpoint. */
  checkpoint(turn: number): void;
  /**
   * Resolves once the checkpoints so far are on disk, when `checkpoint` leaves its fsync running
   * (tool calls wait for it); absent when every checkpoint is durable on return.
   */
  durable?(): Promise<void>;
}

export interface LimitBreach {
  limit_code: LimitCode;
  current_value: number;
  current_max: number;
}

/** A hook's control result (§5.5): `{action:'retry'}` or a result that ends the thread. */
export type ControlResult = Record<string, unknown>;

export interface LoopHooks {
  /** Runs every matching hook of a control event; answers the first control result, or null. */
  control(event: string, context: Record<string, unknown>): Promise<ControlResult | null>;
}

export interface LoopContext {
  threadId: string;
  directiveId: string;
  model: LanguageModel;
  system: string;
  /** The first user message (fresh) or the resumed conversation. */
  messages: ChatMessage[];
  /**
   * A run resumed from its transcript: what it already cost (the loop counts on from it), and
   * its conversation is already recorded, so no opening message is logged again.
   */
  resumedFrom?: { cost: ThreadCost };
  palette: Palette;
  /** Declared `<outputs>`, or undefined when the directive declares none. */
  outputs?: OutputSpec[];
  limits: { turns: number; tokens: number; spend: number; duration_seconds: number };
  pricing?: { input?: number; output?: number };
  maxTokens: number;
  contextWindow: number;
  /** Fraction of the context window that triggers the context_limit_reached path. */
  contextThreshold: number;
  /** `tool_use.mode`: the nudge applies to native tool use only. */
  nativeTools: boolean;
  /** Provider `stream.mode` (default inline: tools start inside the stream). */
  streamMode?: StreamMode;
  /** streaming.yaml batching (default 5 calls / 100 ms, 8 at once). */
  dispatchSettings?: DispatchSettings;
  /** For `tool_use.mode: text_parsed`: a fresh parser of calls written into the text. */
  textParser?: () => TextToolParser;
  /** Calls one response may make (streaming.yaml `max_tool_calls_per_turn`, 64). */
  maxCallsPerTurn?: number;
  /** The orchestrator, scoped to this thread (see `CallContext.orchestrate`). */
  orchestrate?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Every raw SSE payload with its turn, for the optional stream sinks. */
  onData?: (data: string, turn: number) => void;
  log: ThreadLog;
  /** The thread's trace spans, when a trace is being recorded. */
  spans?: ThreadSpans;
  hooks: LoopHooks;
  permission: Permission;
  dispatch: PrimaryDispatch;
  guard: ResultGuard;
  checkLimits(cost: ThreadCost): LimitBreach | undefined | Promise<LimitBreach | undefined>;
  /** What the thread may still spend (its limit and its ledger's remaining); default its limit. */
  remainingSpend?(cost: ThreadCost): number | Promise<number>;
  classifyError(error: ProviderCallErrorInfo): ErrorClassification;
  /** Seconds to wait before retry `attempt` (0-based consecutive failure index). */
  retryDelay(classification: ErrorClassification, attempt: number, error: ProviderCallErrorInfo): number;
  /** True once the thread was asked to stop (in-process signal or a marker another process wrote). */
  isCancelled(): boolean;
  /**
   * True once this process hands the thread back (a stopping worker): the loop ends before its next
   * turn, the thread left running for another process to take up from its transcript.
   */
  isHandedBack?(): boolean;
  /**
   * Whether this run still holds its thread (a queued run's fencing check): asked before each
   * model request; once false, the loop ends with nothing more done (`taken_over`).
   */
  stillHolds?(): Promise<boolean>;
  signal?: AbortSignal;
  /** Called after every model response with the spend it added (the ledger's `increment_actual`). */
  onSpend(delta: number): void | Promise<void>;
  onCostSnapshot(cost: ThreadCost): void | Promise<void>;
  /**
   * At the context threshold: registers the continuation thread, links it and records the
   * handoff; answers its id, or undefined when it could not (the hooks decide then).
   */
  prepareHandoff?(turn: number): Promise<string | HandoffRefused | undefined>;
  /** Builds the rendering of the directive's knowledge transcript (best effort). */
  onCheckpoint?(turn: number): void;
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Where a thread's wall time went: the model, the tools, and the runner itself. */
export interface LoopTiming {
  provider_ms: number;
  tools_ms: number;
  runner_ms: number;
  /** Per call run: ms from its completion in the stream to its start (streaming, seed 002). */
  tool_start_delays_ms: number[];
  /** Per pass of the loop (a turn, or a retried request): the runner's own ms, as in `runner_ms`. */
  runner_ms_by_turn: number[];
}

/** Why a thread that filled its context window may not hand off: it ends in error with this. */
export interface HandoffRefused {
  error: string;
  error_code: ThreadErrorCode;
}

export interface LoopResult {
  success: boolean;
  status?: 'completed' | 'error' | 'cancelled' | 'continued';
  /** Ended before a turn because its process hands the thread back (`isHandedBack`): not finalized. */
  handed_back?: true;
  /** Ended because another run took the thread up (`stillHolds`): nothing is recorded. */
  taken_over?: true;
  result?: string;
  outputs?: Record<string, unknown>;
  error?: string;
  limit_code?: string;
  error_context?: Record<string, unknown>;
  recent_llm_errors?: Record<string, unknown>[];
  [key: string]: unknown;
}
