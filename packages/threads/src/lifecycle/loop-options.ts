/**
 * What the run phase hands the turn loop: the prepared thread's model, palette and limits, and
 * the callbacks through which the loop reaches the store (limits, spend, snapshots), the
 * capabilities (permission checks), the orchestrator and the handoff.
 */
import { join } from 'node:path';
import type { HookRunner } from '../hook-runner.js';
import { classifyProviderError, parseErrorClassification, retryDelaySeconds } from '../hooks/errors.js';
import type { ThreadHost } from '../host.js';
import { orchestrateFor } from '../orchestration/scoped.js';
import { checkPermission, permissionTarget } from '../policy/capabilities.js';
import { maxChainLength } from '../policy/chain-budget.js';
import { checkPreTurnLimits } from '../policy/limits.js';
import type { PreparedThread } from '../prepared.js';
import type { LanguageModel } from '../provider/types.js';
import type { Permission } from '../runner/calls.js';
import type { LoopContext, ThreadLog } from '../runner/loop.js';
import type { Palette } from '../runner/palette.js';
import { ResultGuard } from '../runner/result-guard.js';
import type { StreamMode } from '../runner/stream-turn.js';
import type { ThreadSpans } from '../runner/thread-spans.js';
import type { ThreadStore } from '../store/types.js';
import type { TextToolParser } from '../streaming/text-parser.js';
import type { RunThread } from '../thread-request.js';
import type { CancelWatch } from './cancel-watch.js';
import type { Opening } from './opening.js';
import { registerThread } from './register.js';
import type { RunPlace } from './run-types.js';

export interface LoopOptionsInput {
  host: ThreadHost;
  place: RunPlace;
  dir: string;
  prepared: PreparedThread;
  palette: Palette;
  opening: Opening;
  model: LanguageModel;
  streamMode: StreamMode | undefined;
  textParser: (() => TextToolParser) | undefined;
  log: ThreadLog & { checkpoint(turn: number): void };
  hooks: HookRunner;
  cancel: CancelWatch;
  /** Aborted when the thread is to be handed back before its next turn (a stopping worker). */
  handBack?: AbortSignal | undefined;
  onData: (data: string, turn: number) => void;
  onCheckpoint: (turn: number) => void;
  /** The runner children and orchestrated runs go through (passed in: this module is below it). */
  runThread: RunThread;
  /** Told the id of the continuation this thread hands off to. */
  onHandoff: (nextThreadId: string) => void;
  /** The thread's trace spans, when a trace is being recorded. */
  spans?: ThreadSpans;
}

export type LoopLimits = LoopContext['limits'];

function loopLimits(prepared: PreparedThread): LoopLimits {
  const { limits } = prepared;
  return {
    turns: Number(limits.turns),
    tokens: Number(limits.tokens),
    spend: Number(limits.spend),
    duration_seconds: Number(limits.duration_seconds),
  };
}

export function loopOptions(input: LoopOptionsInput): LoopContext {
  const { host, place, prepared, cancel } = input;
  const { store, threadId, directiveId } = place;
  const resolved = prepared.model;
  const limits = loopLimits(prepared);
  const errorClasses = parseErrorClassification(prepared.error_classification, 'error_classification.yaml');
  return {
    threadId,
    directiveId,
    model: input.model,
    system: input.opening.system,
    messages: input.opening.messages,
    ...(input.opening.resumedFrom ? { resumedFrom: input.opening.resumedFrom } : {}),
    palette: input.palette,
    ...(prepared.outputs ? { outputs: prepared.outputs } : {}),
    limits,
    ...(resolved.pricing ? { pricing: resolved.pricing } : {}),
    maxTokens: prepared.max_output_tokens,
    contextWindow: Number(resolved.config.context_window ?? 200_000),
    contextThreshold: Number(prepared.continuation.trigger_threshold ?? 0.9),
    nativeTools: !input.textParser,
    ...(input.streamMode ? { streamMode: input.streamMode } : {}),
    dispatchSettings: prepared.streaming.dispatch,
    maxCallsPerTurn: prepared.streaming.maxCallsPerTurn,
    ...(input.textParser ? { textParser: input.textParser } : {}),
    onData: input.onData,
    log: input.log,
    ...(input.spans ? { spans: input.spans } : {}),
    hooks: input.hooks,
    permission: capabilityCheck(prepared.capabilities),
    dispatch: host.dispatch,
    guard: new ResultGuard(join(input.dir, 'artifacts')),
    ...ledgerCallbacks(store, threadId, limits, place),
    classifyError: (info) => classifyProviderError(errorClasses, info),
    retryDelay: (c, attempt, info) => retryDelaySeconds(c.retry_policy, attempt, info.retryAfterSeconds),
    isCancelled: cancel.isCancelled,
    ...(input.handBack ? { isHandedBack: () => input.handBack!.aborted } : {}),
    ...(place.lease ? { stillHolds: () => place.lease!.holds() } : {}),
    signal: cancel.signal,
    onCheckpoint: input.onCheckpoint,
    orchestrate: (params) => orchestrateFor(host, threadId, params, input.runThread, cancel.signal),
    prepareHandoff: handoffPreparer(input),
  };
}

/** Every call the model makes is checked against the thread's capabilities before it runs. */
function capabilityCheck(capabilities: readonly string[]): Permission {
  return {
    check: (call, entry) => {
      if (!entry) return undefined;
      try {
        const target = permissionTarget(call.input, {
          name: entry.name,
          _item_id: entry.itemId,
          _primary: entry.primary,
        });
        const verdict = checkPermission(capabilities, target);
        return verdict.allowed ? undefined : { ...verdict.denial };
      } catch (error) {
        return { error: `Permission check failed: ${(error as Error).message}` };
      }
    },
  };
}

/** The loop's view of the ledger and registry: limits before each turn, spend after each response. */
function ledgerCallbacks(
  store: ThreadStore,
  threadId: string,
  limits: LoopLimits,
  place: RunPlace,
): Pick<LoopContext, 'checkLimits' | 'remainingSpend' | 'onSpend' | 'onCostSnapshot'> {
  return {
    checkLimits: async (cost) =>
      checkPreTurnLimits(
        limits,
        {
          turns: cost.turns,
          tokens: cost.input_tokens + cost.output_tokens,
          spend: cost.spend,
          elapsedSeconds: cost.elapsed_seconds,
        },
        await store.ledger.getRemaining(threadId),
      ),
    remainingSpend: async (cost) =>
      Math.min(limits.spend - cost.spend, await store.ledger.getRemaining(threadId)),
    onSpend: (delta) => store.ledger.incrementActual(threadId, delta),
    onCostSnapshot: async (cost) => {
      // The row's cost is the run's that holds the thread (its spend is charged either way).
      if (place.lease?.lost) return;
      try {
        await store.registry.updateCostSnapshot(threadId, cost);
      } catch {
        // A snapshot is best effort; the final cost is written at finalize.
      }
    },
  };
}

/** At the context threshold: registers the continuation (within the chain's length) and records the handoff. */
function handoffPreparer(input: LoopOptionsInput): LoopContext['prepareHandoff'] {
  const { place, prepared, log } = input;
  return async (turn) => {
    const maxChain = maxChainLength(prepared.continuation);
    if ((prepared.chain_length ?? 1) >= maxChain) {
      return {
        error: `The thread filled its context window, and its chain already holds ${maxChain} threads: no further handoff (coordination.yaml continuation.max_chain_length)`,
        error_code: 'chain_length_exceeded',
      };
    }
    try {
      log.checkpoint(turn);
      const next = await registerThread(
        place.store,
        place.directiveId,
        place.parent?.threadId,
        place.stateRoot,
      );
      log.emit('thread_handoff', { new_thread_id: next, directive: place.directiveId });
      input.onHandoff(next);
      return next;
    } catch {
      return undefined;
    }
  };
}
