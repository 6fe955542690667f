/**
 * One tool call of a model, from its arrival to the text the model reads back (spec threads
 * §7.3 steps 8–9). Split in two so a streaming turn can decide at once what a call is — unknown,
 * unreadable, denied, the directive's return, or work to run — and run only the work later,
 * batched and grouped (§9). Nothing here throws for a bad call: it becomes the call's result.
 */
import { parseRef } from '@ryeos/executor';
import type { PrimaryCall, PrimaryDispatch } from '../host.js';
import type { ChatMessage, ToolCall } from '../provider/types.js';
import type { Palette, PaletteEntry } from './palette.js';
import { DIRECTIVE_RETURN_ID, ORCHESTRATOR_ID, READ_ARTIFACT_ID } from './palette.js';

import type { ResultGuard } from './result-guard.js';
import { checkReturn, nameList } from './returned-outputs.js';

export interface Permission {
  /** undefined: allowed; otherwise the denial that goes back to the model as the tool result. */
  check(call: ToolCall, entry: PaletteEntry | undefined): Record<string, unknown> | undefined;
}

export interface OutputSpec {
  name: string;
  /** The declared `<output type>` (string when absent), checked when the model returns. */
  type?: string;
  required: boolean;
}

/** What a call's handling needs from its thread. */
export interface CallContext {
  threadId: string;
  palette: Palette;
  outputs?: OutputSpec[];
  permission: Permission;
  dispatch: PrimaryDispatch;
  guard: ResultGuard;
  contextWindow: number;
  signal?: AbortSignal;
  /**
   * Answers calls of the orchestrator tool in-process, scoped to this thread's own children
   * (orchestration/scoped.ts); without it they go through dispatch like any tool.
   */
  orchestrate?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** A queued run's fencing check, asked again once a call returns (see `LoopContext.stillHolds`). */
  stillHolds?(): Promise<boolean>;
}

export interface CallOutcome {
  content: string;
  isError: boolean;
  durationMs: number;
  /** Time spent in the dispatched operation (the tool itself), not in the runner. */
  dispatchMs: number;
  /** The outputs of a valid `directive_return`. */
  returned?: Record<string, unknown>;
}

/** What a call is, decided the moment it is complete. */
export type CallPlan =
  | { kind: 'settled'; outcome: CallOutcome }
  | { kind: 'return'; entry: PaletteEntry }
  | { kind: 'run'; entry: PaletteEntry; lane: string };

const DROPPED_KEYS = new Set(['chain', 'metadata', 'path', 'source', 'resolved_env_keys']);
const SIGNATURE_LINE = /^.*rye:signed:.*(\r?\n|$)/gm;

function isMap(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === 'object' && !Array.isArray(value);
}

/** What a model reads of a tool's envelope: the data of `rye/` tools, without bookkeeping. */
export function cleanResult(itemId: string, envelope: Record<string, unknown>): unknown {
  let body: unknown = envelope;
  if (envelope.status === 'success' && itemId.startsWith('rye/') && 'data' in envelope) body = envelope.data;
  if (!isMap(body)) return typeof body === 'string' ? body.replace(SIGNATURE_LINE, '') : body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (DROPPED_KEYS.has(key)) continue;
    out[key] = key === 'content' && typeof value === 'string' ? value.replace(SIGNATURE_LINE, '') : value;
  }
  return out;
}

/**
 * An `item_id` argument exactly as the executor will resolve it (parseRef trims, for one): two
 * spellings of one item are one item, for the orchestrator's scoped path and for lanes alike.
 */
function resolvedId(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    return parseRef(raw).id;
  } catch {
    return raw;
  }
}

/** The id of the item a palette call runs: the inner item of `rye_execute`, else the entry's own. */
function executedItem(call: ToolCall, entry: PaletteEntry): string | undefined {
  if (entry.kind !== 'primary' || entry.primary !== 'execute') return entry.itemId;
  return resolvedId(call.input.item_id);
}

/** The arguments meant for the item: `rye_execute`'s `parameters`, else the call's own input. */
function itemArguments(call: ToolCall, entry: PaletteEntry): Record<string, unknown> {
  return entry.kind === 'primary' && isMap(call.input.parameters) ? call.input.parameters : call.input;
}

function isDirectiveReturn(call: ToolCall, entry: PaletteEntry): boolean {
  if (entry.kind === 'directive_return') return true;
  return (
    entry.kind === 'primary' &&
    entry.primary === 'execute' &&
    executedItem(call, entry) === DIRECTIVE_RETURN_ID
  );
}

/**
 * Calls in one lane run one after another, in stream order; lanes run side by side (§9 "grouped
 * by item_id"). The lane is the item a call acts on, so two calls of one tool never overlap —
 * unless its signed metadata declares them parallel-safe, when each call gets a lane of its own.
 */
function laneOf(call: ToolCall, entry: PaletteEntry): string {
  if (entry.kind === 'tool' && entry.parallelSafe === true) return `call:${call.id}`;
  if (entry.kind === 'primary') return `${entry.primary}:${resolvedId(call.input.item_id) ?? ''}`;
  return `execute:${entry.itemId}`;
}

/** A primary call for a palette entry; rye_execute's own arguments go through as they are. */
function primaryCallOf(
  call: ToolCall,
  entry: PaletteEntry,
  threadId: string,
  signal?: AbortSignal,
  beforeEffects?: () => Promise<void>,
  onOutput?: PrimaryCall['onOutput'],
): PrimaryCall {
  const base = {
    threadId,
    ...(signal ? { signal } : {}),
    ...(beforeEffects ? { beforeEffects } : {}),
    ...(onOutput ? { onOutput } : {}),
  };
  if (entry.kind === 'tool') {
    return { ...base, primary: 'execute', args: { item_id: `tool:${entry.itemId}`, parameters: call.input } };
  }
  return { ...base, primary: entry.primary, args: call.input };
}

/** Characters of the conversation, the stand-in for its token count (÷ 4). */
export function textOfMessages(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content.length;
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) chars += JSON.stringify(c.input).length;
  }
  return chars;
}

function outcome(
  content: unknown,
  isError: boolean,
  startedAt: number,
  extra: Partial<CallOutcome> = {},
): CallOutcome {
  return {
    content: typeof content === 'string' ? content : JSON.stringify(content),
    isError,
    durationMs: Math.round(performance.now() - startedAt),
    dispatchMs: 0,
    ...extra,
  };
}

/** Decides what a complete call is, without running anything. */
export function planCall(ctx: CallContext, call: ToolCall): CallPlan {
  const startedAt = performance.now();
  const entry = ctx.palette.byName.get(call.name);
  const settled = (content: unknown): CallPlan => ({
    kind: 'settled',
    outcome: outcome(content, true, startedAt),
  });
  if (!entry) {
    return settled({
      error: `Unknown tool '${call.name}'. Use one of: ${[...ctx.palette.byName.keys()].join(', ')}`,
    });
  }
  if ('_raw' in call.input && Object.keys(call.input).length === 1) {
    return settled({
      error: `The arguments of ${call.name} were not valid JSON. Call it again with a JSON object.`,
    });
  }
  const denial = ctx.permission.check(call, entry);
  if (denial) return settled(denial);
  if (isDirectiveReturn(call, entry)) return { kind: 'return', entry };
  return { kind: 'run', entry, lane: laneOf(call, entry) };
}

/**
 * A `directive_return` call, checked once every other call of its turn has settled: the outputs
 * when they are complete (or the model reports `status: "error"`), else an error the model can fix.
 */
export function handleReturn(
  ctx: CallContext,
  call: ToolCall,
  entry: PaletteEntry,
  alreadyReturned: boolean,
): CallOutcome {
  const startedAt = performance.now();
  if (alreadyReturned) {
    return outcome(
      { status: 'success', note: 'Outputs were already returned in this turn.' },
      false,
      startedAt,
    );
  }
  const values = itemArguments(call, entry);
  // A directive that declares no outputs has no return schema to hold its values to.
  if (!ctx.outputs)
    return outcome({ status: 'success', returned: true }, false, startedAt, { returned: { ...values } });
  const checked = checkReturn(ctx.outputs, values);
  if (!checked.ok) {
    return outcome(
      {
        error: `${checked.problems.join(' ')} Call directive_return again with every required field, each of its declared type.`,
      },
      true,
      startedAt,
    );
  }
  const note = checked.dropped.length
    ? { note: `Not declared as outputs, so not kept: ${nameList(checked.dropped)}.` }
    : {};
  return outcome({ status: 'success', returned: true, ...note }, false, startedAt, {
    returned: checked.outputs,
  });
}

/**
 * Runs a call planned as `run`: the artifact reader in-process, everything else through dispatch.
 * Nothing has an effect before `durable` resolves: a dispatch that awaits it itself gets it with
 * the call (the item's verification then overlaps the wait); every other path waits first.
 */
export async function runPlannedCall(
  ctx: CallContext,
  call: ToolCall,
  entry: PaletteEntry,
  messages: readonly ChatMessage[],
  durable?: () => Promise<void>,
  onOutput?: PrimaryCall['onOutput'],
): Promise<CallOutcome> {
  const itemId = executedItem(call, entry) ?? entry.itemId;
  const inProcess =
    entry.itemId === READ_ARTIFACT_ID || (ctx.orchestrate !== undefined && itemId === ORCHESTRATOR_ID);
  const gate = ctx.dispatch.awaitsBeforeEffects === true && !inProcess ? durable : undefined;
  const startedAt = performance.now();
  if (!gate) {
    try {
      await durable?.();
    } catch (error) {
      // Not run: its run lost the thread; any other failure to make the transcript durable ends it.
      if ((await ctx.stillHolds?.()) !== false) throw error;
      return outcome({ status: 'error', error: (error as Error).message }, true, startedAt);
    }
  }
  if (entry.itemId === READ_ARTIFACT_ID) {
    const ref = typeof call.input.artifact_ref === 'string' ? call.input.artifact_ref : '';
    const read = ctx.guard.read(ref, Number(call.input.offset ?? 0), Number(call.input.length ?? 8000));
    return outcome(read, read.status === 'error', startedAt);
  }
  if (ctx.orchestrate && itemId === ORCHESTRATOR_ID) {
    const dispatchedAt = performance.now();
    const answer = await ctx.orchestrate(itemArguments(call, entry));
    return outcome(answer, answer.success === false, startedAt, {
      dispatchMs: performance.now() - dispatchedAt,
    });
  }
  let envelope: Record<string, unknown>;
  const dispatchedAt = performance.now();
  try {
    envelope = await ctx.dispatch(primaryCallOf(call, entry, ctx.threadId, ctx.signal, gate, onOutput));
  } catch (error) {
    // dispatch promises never to throw; if it does, the model still gets an answer.
    envelope = { status: 'error', error: `The call failed: ${(error as Error)?.message ?? String(error)}` };
  }
  const dispatchMs = performance.now() - dispatchedAt;
  // A run that stalled in the call learns here whether it still holds the thread, before it records anything.
  await ctx.stillHolds?.();
  const cleaned = cleanResult(itemId, envelope);
  const ratio = textOfMessages(messages) / 4 / ctx.contextWindow;
  const guarded = await ctx.guard.guard(call.id, cleaned, ratio);
  return outcome(guarded.content, envelope.status === 'error', startedAt, { dispatchMs });
}
