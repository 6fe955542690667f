/**
 * Continuations (spec threads §10.6): a thread that filled its context window hands off to a new
 * thread, and a finished thread can be resumed with a new message. Either way the new thread
 * carries the original inputs (from the old thread's signed `thread.json`) and a bounded tail of
 * the old conversation, rebuilt from its verified transcript, and the chain is linked before the
 * new thread runs.
 */
import { join } from 'node:path';
import { clipText, RyeError } from '@ryeos/lillux';
import { verifyThreadRecords } from '../inspect.js';
import { resumeMessages } from '../persistence/reconstruct.js';
import type { Signer, Trust } from '../persistence/signer.js';
import { type ThreadJson, writeThreadJson } from '../persistence/thread-json.js';
import { TranscriptWriter } from '../persistence/transcript.js';
import { readTranscript } from '../persistence/transcript-read.js';
import type { ChatMessage } from '../provider/types.js';
import type { ThreadStore } from '../store/types.js';

export const DEFAULT_CONTINUATION_MESSAGE =
  "Pick up where the previous thread left off. Continue executing the directive's instructions.";
/** coordination.yaml `resume_ceiling_tokens`. */
export const DEFAULT_RESUME_CEILING_TOKENS = 16_000;

/** Longer chains than this are refused rather than walked (a loop of hand-made links, say). */
const MAX_CHAIN_LENGTH = 1000;

/** One thread's signed records, strictly verified; anything less is an integrity error. */
export async function verifiedRecord(
  dir: string,
  threadId: string,
  trust: Trust,
  asked: string,
): Promise<ThreadJson> {
  // Strict: a finished thread's transcript ends in its final checkpoint, and a line appended
  // after it (by anyone) must not reach the model as the thread's own past.
  const records = await verifyThreadRecords(dir, threadId, trust, { transcript: 'strict' });
  if (!records.valid || !records.data) {
    const which = threadId === asked ? '' : ` (its chain's thread '${threadId}')`;
    throw new RyeError(
      'INTEGRITY',
      `Cannot continue thread '${asked}'${which}: its records do not verify: ${records.thread_json.error ?? records.transcript.error ?? 'unknown reason'}`,
      { hint: 'A continuation carries only a verified conversation: every thread of its chain must verify.' },
    );
  }
  return records.data;
}

/**
 * The old thread's verified record and the tail of its conversation. Every earlier thread of its
 * chain (followed through the signed `previous_thread_id`s) is verified too, on every
 * continuation: one verified once is not trusted again, since its files can change after.
 */
export async function carriedConversation(
  stateDir: (threadId: string) => string,
  threadId: string,
  trust: Trust,
  ceilingTokens: number,
): Promise<{ record: ThreadJson; messages: ChatMessage[]; chainLength: number }> {
  const dir = stateDir(threadId);
  const record = await verifiedRecord(dir, threadId, trust, threadId);
  const seen = new Set([threadId]);
  for (let earlier = record.previous_thread_id; earlier; ) {
    if (seen.has(earlier) || seen.size >= MAX_CHAIN_LENGTH) {
      throw new RyeError(
        'INTEGRITY',
        `Cannot continue thread '${threadId}': its chain loops back to '${earlier}'`,
        {
          hint: 'A chain of continuations runs one way; records that link in a circle were not written by rye.',
        },
      );
    }
    seen.add(earlier);
    earlier = (await verifiedRecord(stateDir(earlier), earlier, trust, threadId)).previous_thread_id;
  }
  const events = await readTranscript(join(dir, 'transcript.jsonl'));
  return { record, messages: tailWithin(resumeMessages(events), ceilingTokens), chainLength: seen.size };
}

/** Opens a carried tail that starts mid-conversation (a conversation may not open with an answer). */
export const OMITTED_NOTE =
  "[The previous thread's earlier messages did not fit here; its conversation continues below from its most recent part.]";
const CUT_NOTE = '\n[... cut: the rest of this message did not fit the continuation]';
/** Stands for a call's input that did not fit: the wire still needs an object there. */
const CUT_INPUT: Readonly<Record<string, unknown>> = { cut: 'this input did not fit the continuation' };

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;
type Turn =
  | { kind: 'user'; message: ChatMessage }
  | { kind: 'calls'; assistant: AssistantMessage; results: ToolMessage[] };

/** What a message costs against the ceiling: its text and, for an assistant, its calls as sent. */
function charsOf(m: ChatMessage): number {
  return m.content.length + (m.role === 'assistant' ? JSON.stringify(m.tool_calls ?? []).length : 0);
}

function sizeOfTurn(turn: Turn): number {
  if (turn.kind === 'user') return charsOf(turn.message);
  return turn.results.reduce((sum, r) => sum + charsOf(r), charsOf(turn.assistant));
}

function messagesOf(turn: Turn): ChatMessage[] {
  return turn.kind === 'user'
    ? [{ ...turn.message }]
    : [{ ...turn.assistant }, ...turn.results.map((r) => ({ ...r }))];
}

/**
 * The conversation as turns: a user message, or an assistant message with the results that answer
 * its calls. A result that answers no call of its turn is left out: it cannot be carried alone.
 */
function turnsOf(messages: readonly ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const m of messages) {
    if (m.role === 'user') turns.push({ kind: 'user', message: m });
    else if (m.role === 'assistant') turns.push({ kind: 'calls', assistant: m, results: [] });
    else {
      const last = turns.at(-1);
      if (last?.kind === 'calls' && last.assistant.tool_calls?.some((c) => c.id === m.tool_call_id))
        last.results.push(m);
    }
  }
  return turns;
}

/** `text` within `room` characters, cut behind a note; undefined when not even the note fits. */
function cutText(text: string, room: number): string | undefined {
  if (text.length <= room) return text;
  if (room < CUT_NOTE.length) return undefined;
  return `${clipText(text, room - CUT_NOTE.length)}${CUT_NOTE}`;
}

/** The fewest characters `text` can be carried in (whole, or the cut note alone). */
function leastOf(text: string): number {
  return Math.min(text.length, CUT_NOTE.length);
}

/**
 * The newest part of a turn of calls within `room` characters, or undefined when nothing of it
 * fits: its newest calls, each with its results (a call never travels without them, nor a result
 * without its call), then what room is left goes to the results' text, newest first, the
 * assistant's own text, and the calls' inputs, which are otherwise replaced by a note object.
 */
function fitCalls(turn: Extract<Turn, { kind: 'calls' }>, room: number): ChatMessage[] | undefined {
  const calls = turn.assistant.tool_calls ?? [];
  const resultsOf = (id: string) => turn.results.filter((r) => r.tool_call_id === id);
  const fullCall = calls.map((c) => JSON.stringify(c).length);
  const leastCall = calls.map((c) =>
    Math.min(JSON.stringify(c).length, JSON.stringify({ ...c, input: CUT_INPUT }).length),
  );
  const leastResults = calls.map((c) => resultsOf(c.id).reduce((sum, r) => sum + leastOf(r.content), 0));
  const leastText = leastOf(turn.assistant.content);
  // The cheapest form of the newest `kept` calls: `[` `]`, commas, each call and its results.
  const least = (kept: number) => {
    let sum = leastText + 2 + Math.max(0, kept - 1);
    for (let i = calls.length - kept; i < calls.length; i++) sum += leastCall[i]! + leastResults[i]!;
    return sum;
  };
  let kept = calls.length;
  while (kept > 0 && least(kept) > room) kept -= 1;
  if (least(kept) > room) return undefined;
  let spare = room - least(kept);
  const first = calls.length - kept;

  const results: ToolMessage[][] = [];
  for (let i = calls.length - 1; i >= first; i--) {
    results[i] = resultsOf(calls[i]!.id)
      .reverse()
      .map((r) => {
        const allowed = leastOf(r.content) + spare;
        const content = cutText(r.content, allowed) ?? '';
        spare -= content.length - leastOf(r.content);
        return { ...r, content };
      })
      .reverse();
  }
  const text = cutText(turn.assistant.content, leastText + spare) ?? '';
  spare -= text.length - leastText;
  const keptCalls = calls.slice(first).map((c, k) => {
    const i = first + k;
    if (fullCall[i] === leastCall[i]) return c;
    if (fullCall[i]! - leastCall[i]! <= spare) {
      spare -= fullCall[i]! - leastCall[i]!;
      return c;
    }
    return { ...c, input: { ...CUT_INPUT } };
  });
  if (text === '' && keptCalls.length === 0) return undefined;
  const assistant: AssistantMessage = { role: 'assistant', content: text };
  if (keptCalls.length) assistant.tool_calls = keptCalls;
  return [assistant, ...results.slice(first).flat()];
}

/** The newest part of `turn` within `room` characters, or undefined when nothing of it fits. */
function fitTurn(turn: Turn, room: number): ChatMessage[] | undefined {
  if (turn.kind === 'calls') return fitCalls(turn, room);
  const content = cutText(turn.message.content, room);
  return content === undefined ? undefined : [{ role: 'user', content }];
}

/**
 * The most recent part of a conversation within `ceilingTokens` (characters / 4, counting each
 * message's text and its calls as sent). Whole turns are carried newest first; the first that does
 * not fit is cut to what is left, keeping its newest calls with their results. The tail starts at
 * a user message when one was carried; otherwise at an assistant message behind a fixed note
 * (outside the bound) that earlier messages were left out. Empty when nothing fits at all.
 */
export function tailWithin(messages: readonly ChatMessage[], ceilingTokens: number): ChatMessage[] {
  let left = Math.max(0, ceilingTokens) * 4;
  const kept: ChatMessage[][] = [];
  const turns = turnsOf(messages);
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    const size = sizeOfTurn(turn);
    if (size <= left) {
      kept.unshift(messagesOf(turn));
      left -= size;
      continue;
    }
    const cut = fitTurn(turn, left);
    if (cut) kept.unshift(cut);
    break;
  }
  const firstUser = kept.findIndex((turn) => turn[0]!.role === 'user');
  if (firstUser !== -1) return kept.slice(firstUser).flat();
  return kept.length ? [{ role: 'user', content: OMITTED_NOTE }, ...kept.flat()] : [];
}

/** The user message a continuation starts with: what to carry on with, and the directive itself. */
export function continuationPrompt(options: {
  previousThreadId: string;
  directiveId: string;
  directivePrompt: string;
  message?: string;
  handoff: boolean;
  /** Whether any of the old conversation came along; the prompt must not promise what is not there. */
  carried: boolean;
}): string {
  const ended = options.handoff
    ? 'The previous thread filled its context window'
    : 'The previous thread finished';
  const why = options.carried
    ? `${ended}; the conversation above is its most recent part.`
    : `${ended}; none of its conversation fit here, so work from the directive below.`;
  return [
    `<continuation previous_thread_id="${options.previousThreadId}" directive="${options.directiveId}">`,
    why,
    'The directive you are working on:',
    options.directivePrompt,
    '</continuation>',
    '',
    options.message?.trim() || DEFAULT_CONTINUATION_MESSAGE,
  ].join('\n');
}

/** Appends the continuation prompt: to the last user message when the tail ends with one. */
export function withPrompt(messages: ChatMessage[], prompt: string): ChatMessage[] {
  const last = messages.at(-1);
  if (last?.role === 'user') last.content = `${last.content}\n\n${prompt}`;
  else messages.push({ role: 'user', content: prompt });
  return messages;
}

/**
 * Links `previous` → `next` in the registry and in the old thread's signed record (status
 * `continued`, `continuation_thread_id`), so `threads show` and the registry agree. `event`
 * (resume only: a handoff's old thread writes its own) is appended to the old transcript, then a
 * checkpoint, so the old transcript still ends in a signature.
 */
export async function linkContinuation(options: {
  store: ThreadStore;
  stateDir: (threadId: string) => string;
  previous: ThreadJson;
  nextThreadId: string;
  signer: Signer;
  event?: { type: string; payload: Record<string, unknown> };
}): Promise<void> {
  const { store, previous, nextThreadId } = options;
  const previousId = previous.thread_id;
  // The link is claimed first, atomically: of two resumes of one thread, the second one stops here.
  if (!(await store.registry.setContinuation(previousId, nextThreadId))) {
    const other = (await store.registry.getThread(previousId))?.continuation_thread_id;
    throw new RyeError(
      'VALIDATION',
      `Thread ${previousId} is already continued by ${other ?? 'another thread'}: a chain has one continuation`,
      { hint: `Resume the chain again: it continues from its last thread${other ? ` (${other})` : ''}.` },
    );
  }
  const root = (await store.registry.getThread(previousId))?.chain_root_id ?? previousId;
  await store.registry.setChainInfo(nextThreadId, root, previousId);
  const dir = options.stateDir(previousId);
  await writeThreadJson(
    dir,
    {
      ...previous,
      status: 'continued',
      continuation_thread_id: nextThreadId,
      updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
    },
    options.signer,
  );
  if (options.event) {
    const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), previousId, options.signer);
    try {
      writer.write(options.event.type, options.event.payload);
    } finally {
      writer.close();
    }
  }
}
