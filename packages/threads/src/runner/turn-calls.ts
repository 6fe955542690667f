/**
 * The tool calls of one turn, as the stream completes them: each gets a unique id, is planned
 * (permission, palette, the call cap), recorded as `tool_call_start`, and run in its lane at once
 * (inline) or after the stream (batch); a `directive_return` is held until the others settle.
 */
import type { ChatMessage, ToolCall } from '../provider/types.js';
import type { CallContext, CallOutcome, CallPlan } from './calls.js';
import { handleReturn, planCall, runPlannedCall } from './calls.js';
import { CallDispatcher, type DispatchSettings } from './dispatcher.js';
import { LiveToolOutput } from './live-output.js';
import type { ThreadSpans } from './thread-spans.js';

/** What the calls of a turn need of its request. */
export interface CallsRequest {
  turn: number;
  log: { emit(eventType: string, payload: Record<string, unknown>): void };
  /** The thread's trace spans: each call runs inside its own. */
  spans?: ThreadSpans;
  mode: 'inline' | 'batch';
  dispatch: DispatchSettings;
  /** The conversation before this turn (a call's tool sees it). */
  messages: readonly ChatMessage[];
  maxCallsPerTurn?: number;
  stopReason?: () => string | undefined;
  usedIds?: Set<string>;
  /** Resolves once the thread's last checkpoint is on disk: a call waits for it before it runs. */
  durable?: () => Promise<void>;
}

export interface SettledCall {
  call: ToolCall;
  outcome: CallOutcome;
}

type ReturnEntry = Parameters<typeof handleReturn>[2];

const INTERRUPTED_RETURN = {
  error: 'The response was interrupted before directive_return could be handled. Call it again.',
};

function refused(message: string): CallOutcome {
  return { content: JSON.stringify({ error: message }), isError: true, durationMs: 0, dispatchMs: 0 };
}

/** `call` itself, or a copy with an id no earlier call of the thread had. */
function withUniqueId(call: ToolCall, used: Set<string>): ToolCall {
  let id = call.id;
  if (id === '' || used.has(id)) {
    const base = id === '' ? 'call' : id;
    let n = 2;
    while (used.has(`${base}_${n}`)) n += 1;
    id = `${base}_${n}`;
  }
  used.add(id);
  return id === call.id ? call : { ...call, id };
}

export class TurnCalls {
  private readonly recorded: Array<{ call: ToolCall; result: Promise<CallOutcome> }> = [];
  private readonly held: Array<{ call: ToolCall; entry: ReturnEntry }> = [];
  private readonly deferred: Array<{ call: ToolCall; preset?: CallOutcome }> = [];
  private readonly dispatcher: CallDispatcher<CallOutcome>;
  private readonly usedIds: Set<string>;
  private received = 0;
  private started = 0;

  /** `accepted` is the response's list of calls, in stream order. */
  constructor(
    private readonly ctx: CallContext,
    private readonly request: CallsRequest,
    private readonly accepted: ToolCall[],
  ) {
    this.usedIds = request.usedIds ?? new Set<string>();
    this.dispatcher = new CallDispatcher<CallOutcome>(request.dispatch, (error) => ({
      content: JSON.stringify({ error: `The call failed: ${(error as Error)?.message ?? String(error)}` }),
      isError: true,
      durationMs: 0,
      dispatchMs: 0,
    }));
  }

  get startDelaysMs(): number[] {
    return this.dispatcher.startDelaysMs;
  }

  /** A call complete in the stream; `preset` is the answer of a call that must not run (unreadable). */
  accept(raw: ToolCall, preset?: CallOutcome): void {
    this.received += 1;
    const cap = this.request.maxCallsPerTurn;
    // Past the cap, one call is answered with the refusal and the rest are not kept at all:
    // a flood of calls must not become a flood of transcript lines and messages.
    if (cap !== undefined && this.received > cap + 1) return;
    const call = withUniqueId(raw, this.usedIds);
    this.accepted.push(call);
    if (this.request.mode === 'inline') this.start(call, preset);
    else this.deferred.push(preset ? { call, preset } : { call });
  }

  /** Batch mode: the calls held back until the response was whole. */
  startDeferred(): void {
    for (const { call, preset } of this.deferred.splice(0)) this.start(call, preset);
  }

  /** Waits for every started call; the settled calls in `tool_call_start` order. */
  async settle(): Promise<{ settled: SettledCall[]; toolsAfterStreamMs: number }> {
    const streamEnded = performance.now();
    await this.dispatcher.settle();
    this.dispatcher.dispose();
    const settled: SettledCall[] = [];
    for (const entry of this.recorded) settled.push({ call: entry.call, outcome: await entry.result });
    return { settled, toolsAfterStreamMs: performance.now() - streamEnded };
  }

  /** Handles the held returns (appended to `settled`); the outputs of a valid one. */
  settleReturns(settled: SettledCall[], interrupted: boolean): Record<string, unknown> | undefined {
    let returned: Record<string, unknown> | undefined;
    for (const { call, entry } of this.held) {
      this.logStart(call);
      const outcome: CallOutcome = interrupted
        ? { content: JSON.stringify(INTERRUPTED_RETURN), isError: true, durationMs: 0, dispatchMs: 0 }
        : handleReturn(this.ctx, call, entry, returned !== undefined);
      if (outcome.returned) returned = outcome.returned;
      settled.push({ call, outcome: this.record(call, outcome) });
    }
    return returned;
  }

  private start(call: ToolCall, preset?: CallOutcome): void {
    const plan = this.plan(call, preset);
    if (plan.kind === 'return') {
      this.held.push({ call, entry: plan.entry });
      return;
    }
    this.logStart(call);
    if (plan.kind === 'settled') {
      this.recorded.push({ call, result: Promise.resolve(this.record(call, plan.outcome)) });
      return;
    }
    const run = async () => {
      const stop = this.request.stopReason?.();
      // The results this call follows are on disk before it has any effect (resume relies on it):
      // runPlannedCall waits for `durable`, or hands it to a dispatch that awaits it itself.
      const live = new LiveToolOutput(this.request.log, call.id, this.request.turn);
      const outcome = stop
        ? refused(`Not run: ${stop}.`)
        : await runPlannedCall(
            this.ctx,
            call,
            plan.entry,
            this.request.messages,
            this.request.durable,
            live.onOutput,
          ).finally(() => live.end());
      return this.record(call, outcome);
    };
    const { spans } = this.request;
    const result = this.dispatcher.submit(plan.lane, spans ? () => spans.toolCall(call, run) : run);
    this.recorded.push({ call, result });
  }

  private plan(call: ToolCall, preset?: CallOutcome): CallPlan {
    this.started += 1;
    const cap = this.request.maxCallsPerTurn;
    if (cap !== undefined && this.started > cap) {
      return {
        kind: 'settled',
        outcome: refused(
          `Too many tool calls in one response (at most ${cap}): this call and every later one of this response were not run. Make fewer calls per response.`,
        ),
      };
    }
    return preset ? { kind: 'settled', outcome: preset } : planCall(this.ctx, call);
  }

  private logStart(call: ToolCall): void {
    const { log, turn } = this.request;
    log.emit('tool_call_start', { tool: call.name, call_id: call.id, input: call.input, turn });
  }

  private record(call: ToolCall, outcome: CallOutcome): CallOutcome {
    this.request.log.emit('tool_call_result', {
      call_id: call.id,
      output: outcome.content,
      ...(outcome.isError ? { error: outcome.content } : {}),
      duration_ms: outcome.durationMs,
      turn: this.request.turn,
    });
    return outcome;
  }
}
