/**
 * A thread's spans, when a trace is being recorded (`@ryeos/lillux` tracing), named and
 * attributed after the OpenTelemetry GenAI conventions: `invoke_agent <directive>` for the run,
 * under it `turn <n>` per turn, and under each turn `chat <model>` (the model call, with its
 * token usage) and `execute_tool <name>` per tool call. A call runs inside its span, so what it
 * starts (a forked child thread, a tool's chain) nests under it.
 */
import { type Tracer, type TraceSpan, tracer } from '@ryeos/lillux';
import type { ThreadCost } from '../store/types.js';

export interface ThreadSpanFacts {
  threadId: string;
  directiveId: string;
  modelId: string;
  /** The wire the model speaks (`anthropic`, `openai`): the GenAI provider name. */
  providerName: string;
  /** A W3C `traceparent` handed over by the process that set the thread up. */
  traceParent?: string;
}

/** How a thread ended, as far as its span says (a loop's result, or a run that threw). */
export interface ThreadEnd {
  success: boolean;
  status?: string;
  limit_code?: string;
  error_type?: unknown;
}

export interface ThreadSpans {
  /** Sees every transcript event (the model call's usage ends its span). */
  observe(eventType: string, payload: Record<string, unknown>): void;
  beginTurn(turn: number): void;
  endTurn(): void;
  /** Runs one tool call inside its span. */
  toolCall<T extends { isError?: boolean }>(
    call: { id: string; name: string },
    run: () => Promise<T>,
  ): Promise<T>;
  /** Runs `run` with the thread's span as the parent of what it starts (its finalize hooks). */
  within<T>(run: () => T): T;
  /** Ends every open span; a second call does nothing. */
  end(result: ThreadEnd, cost?: ThreadCost): void;
}

/** The spans of a thread, or `undefined` (at no cost) when nothing traces. */
export async function threadSpans(facts: ThreadSpanFacts): Promise<ThreadSpans | undefined> {
  const loading = tracer();
  const traced = loading && (await loading);
  return traced ? new RecordedThreadSpans(traced, facts) : undefined;
}

class RecordedThreadSpans implements ThreadSpans {
  private readonly thread: TraceSpan;
  private turn: TraceSpan | undefined;
  private chat: TraceSpan | undefined;
  private ended = false;

  constructor(
    private readonly traced: Tracer,
    private readonly facts: ThreadSpanFacts,
  ) {
    this.thread = traced.start(`invoke_agent ${facts.directiveId}`, {
      ...(facts.traceParent ? { parent: facts.traceParent } : {}),
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': facts.directiveId,
        'gen_ai.agent.id': facts.threadId,
        'gen_ai.conversation.id': facts.threadId,
        ...this.modelAttributes(),
        'rye.thread.id': facts.threadId,
      },
    });
  }

  private modelAttributes() {
    return {
      'gen_ai.provider.name': this.facts.providerName,
      'gen_ai.system': this.facts.providerName,
      'gen_ai.request.model': this.facts.modelId,
    };
  }

  observe(eventType: string, payload: Record<string, unknown>): void {
    if (eventType !== 'response_usage' || !this.chat) return;
    this.chat.setAttributes({
      'gen_ai.usage.input_tokens': numberOr(payload.input_tokens),
      'gen_ai.usage.output_tokens': numberOr(payload.output_tokens),
    });
    if (payload.stream_error === true) this.chat.fail('The model stream broke off', 'stream_error');
    this.chat.end();
    this.chat = undefined;
  }

  beginTurn(turn: number): void {
    this.endTurn();
    this.turn = this.traced.start(`turn ${turn}`, {
      parent: this.thread,
      attributes: { 'rye.turn': turn, 'rye.thread.id': this.facts.threadId },
    });
    this.chat = this.traced.start(`chat ${this.facts.modelId}`, {
      parent: this.turn,
      kind: 'client',
      attributes: { 'gen_ai.operation.name': 'chat', ...this.modelAttributes(), 'rye.turn': turn },
    });
  }

  endTurn(): void {
    // A model call that never reported its usage (it failed before any answer).
    this.chat?.fail('The model call returned no response', 'no_response');
    this.chat?.end();
    this.chat = undefined;
    this.turn?.end();
    this.turn = undefined;
  }

  async toolCall<T extends { isError?: boolean }>(
    call: { id: string; name: string },
    run: () => Promise<T>,
  ): Promise<T> {
    const span = this.traced.start(`execute_tool ${call.name}`, {
      parent: this.turn ?? this.thread,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'gen_ai.tool.type': 'function',
      },
    });
    try {
      const outcome = await span.within(run);
      if (outcome.isError) span.fail(`${call.name} answered an error`, 'tool_error');
      return outcome;
    } catch (error) {
      span.fail(`${call.name} threw`, 'internal');
      throw error;
    } finally {
      span.end();
    }
  }

  within<T>(run: () => T): T {
    return this.thread.within(run);
  }

  end(result: ThreadEnd, cost?: ThreadCost): void {
    if (this.ended) return;
    this.ended = true;
    this.endTurn();
    this.thread.setAttributes({
      'gen_ai.usage.input_tokens': cost?.input_tokens,
      'gen_ai.usage.output_tokens': cost?.output_tokens,
      'rye.thread.turns': cost?.turns,
      'rye.thread.spend': cost?.spend,
      'rye.thread.status': result.status ?? (result.success ? 'completed' : 'error'),
    });
    // Codes only: an error's text may quote a provider's answer or a tool's output.
    if (!result.success && result.status !== 'continued') {
      this.thread.fail('The thread failed', String(result.limit_code ?? result.error_type ?? 'thread_error'));
    }
    this.thread.end();
  }
}

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
