/**
 * Replay (spec threads §9 "Replay", `reconstruct_messages`): the conversation a thread had, rebuilt
 * from its transcript for resume and handoff, in the runner's provider-neutral `ChatMessage`s.
 *
 * Events are grouped by `turn`. Within a turn, in event order: `cognition_in` (any role but
 * `tool`) is a user message; `cognition_out` is an assistant message carrying that turn's
 * `tool_call_start`s as `tool_calls`, followed by one tool message per call in start order
 * (`error || output`; "interrupted" when no result was recorded). Results without a start are
 * dropped. Deltas (`cognition_out_delta`, legacy `token_delta`), checkpoints and lifecycle events
 * are skipped.
 */
import type { ChatMessage, ToolCall } from '../provider/types.js';

/** The fields replay reads; a `TranscriptEvent` is one. */
export interface ReplayEvent {
  event_type: string;
  payload: Record<string, unknown>;
}

interface Start {
  call: ToolCall;
}

interface Turn {
  /** The turn's events that replay uses, in file order. */
  events: ReplayEvent[];
}

const REPLAYED = new Set(['cognition_in', 'cognition_out', 'tool_call_start', 'tool_call_result']);

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

function toolCall(payload: Record<string, unknown>): ToolCall {
  const input = payload.input;
  return {
    id: text(payload.call_id),
    name: text(payload.tool),
    input:
      typeof input === 'object' && input !== null && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : input === undefined
          ? {}
          : { _raw: input },
  };
}

/** Events grouped by turn, turns in order of first appearance; an event without a turn joins the current one. */
function groupByTurn(events: readonly ReplayEvent[]): Turn[] {
  const turns = new Map<number, Turn>();
  let current = 0;
  for (const event of events) {
    if (!REPLAYED.has(event.event_type)) continue;
    const turn = event.payload.turn;
    if (typeof turn === 'number' && Number.isFinite(turn)) current = turn;
    let group = turns.get(current);
    if (!group) {
      group = { events: [] };
      turns.set(current, group);
    }
    group.events.push(event);
  }
  return [...turns.values()];
}

/**
 * The starts each `cognition_out` of a turn carries: those since the previous `cognition_out`
 * (TS streams tools before `cognition_out`); starts after the last one go to the last one (the
 * reference wrote `cognition_out` first). A turn whose stream died before any `cognition_out`
 * gets an empty assistant message for its calls, so their results keep a call to answer.
 */
function assignStarts(turn: Turn): Array<{ out: ReplayEvent | undefined; starts: Start[] }> {
  const segments: Array<{ out: ReplayEvent | undefined; starts: Start[] }> = [];
  let starts: Start[] = [];
  for (const event of turn.events) {
    if (event.event_type === 'tool_call_start') starts.push({ call: toolCall(event.payload) });
    else if (event.event_type === 'cognition_out') {
      segments.push({ out: event, starts });
      starts = [];
    }
  }
  if (starts.length) {
    const last = segments.at(-1);
    if (last) last.starts.push(...starts);
    else segments.push({ out: undefined, starts });
  }
  return segments;
}

function resultsById(events: readonly ReplayEvent[]): Map<string, Record<string, unknown>> {
  const results = new Map<string, Record<string, unknown>>();
  for (const event of events) {
    if (event.event_type !== 'tool_call_result') continue;
    const id = text(event.payload.call_id);
    if (!results.has(id)) results.set(id, event.payload);
  }
  return results;
}

function toolMessage(call: ToolCall, result: Record<string, unknown> | undefined): ChatMessage {
  if (!result) return { role: 'tool', tool_call_id: call.id, content: 'interrupted', is_error: true };
  const error = result.error;
  if (error !== undefined && error !== null && error !== '')
    return { role: 'tool', tool_call_id: call.id, content: text(error), is_error: true };
  return { role: 'tool', tool_call_id: call.id, content: text(result.output) };
}

export function reconstructMessages(events: readonly ReplayEvent[]): ChatMessage[] {
  const results = resultsById(events);
  const messages: ChatMessage[] = [];
  for (const turn of groupByTurn(events)) {
    const segments = assignStarts(turn);
    const outs = segments.filter((segment) => segment.out !== undefined);
    const lastOut = outs.at(-1)?.out;
    const emitSegment = (segment: { out: ReplayEvent | undefined; starts: Start[] }) => {
      const payload = segment.out?.payload ?? {};
      // A partial answer without tool calls was retried in the same turn: the retry replaces it,
      // as it did in the runner's own message list.
      if (payload.is_partial === true && segment.starts.length === 0 && segment.out !== lastOut) return;
      const assistant: ChatMessage = { role: 'assistant', content: text(payload.text) };
      if (segment.starts.length) assistant.tool_calls = segment.starts.map((start) => start.call);
      messages.push(assistant);
      for (const start of segment.starts) messages.push(toolMessage(start.call, results.get(start.call.id)));
    };
    let next = 0;
    for (const event of turn.events) {
      if (event.event_type === 'cognition_in') {
        if (event.payload.role === 'tool') continue;
        messages.push({ role: 'user', content: text(event.payload.text) });
      } else if (event.event_type === 'cognition_out') {
        emitSegment(segments[next++]!);
      }
    }
    // Calls of a stream that died before its cognition_out.
    if (next < segments.length) emitSegment(segments[next]!);
  }
  return messages;
}

/**
 * The conversation to resume an interrupted thread with (spec threads §9 "Replay", seed 002
 * "Resume from Partial State"): the reconstructed messages and, when the thread's last answer
 * was cut off mid-stream, a note saying how far it got. The note is a user message (the seed's
 * system role is rejected mid-conversation by Anthropic).
 */
export function resumeMessages(events: readonly ReplayEvent[]): ChatMessage[] {
  const messages = reconstructMessages(events);
  let last: ReplayEvent | undefined;
  for (const event of events) if (event.event_type === 'cognition_out') last = event;
  if (last?.payload.is_partial !== true) return messages;
  const percent = last.payload.completion_percentage;
  const note = `[Previous response was interrupted at ${typeof percent === 'number' ? `${percent}%` : 'an unknown point'}]`;
  const tail = messages.at(-1);
  // A partial answer with no calls is the last message; one with calls ends in their results.
  if (tail?.role === 'user') tail.content = `${tail.content}\n\n${note}`;
  else messages.push({ role: 'user', content: note });
  return messages;
}
