/**
 * Continuations (spec threads §10.6): a thread that filled its context window hands off to a new
 * thread, and a finished thread can be resumed with a new message. Either way the new thread
 * carries the original inputs (from the old thread's signed `thread.json`) and a bounded tail of
 * the old conversation, rebuilt from its verified transcript, and the chain is linked before the
 * new thread runs.
 */
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
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
): Promise<{ record: ThreadJson; messages: ChatMessage[] }> {
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
  return { record, messages: tailWithin(resumeMessages(events), ceilingTokens) };
}

/** Opens a carried tail that starts mid-conversation (a conversation may not open with an answer). */
export const OMITTED_NOTE =
  "[The previous thread's earlier messages did not fit here; its conversation continues below from its most recent part.]";
const CUT_NOTE = '\n[... cut: the rest of this message did not fit the continuation]';
/** Characters of a message kept even when the budget is spent, so a cut message still says something. */
const MIN_KEPT_CHARS = 200;

function charsOf(m: ChatMessage): number {
  return m.content.length + (m.role === 'assistant' ? JSON.stringify(m.tool_calls ?? []).length : 0);
}

/**
 * The most recent part of a conversation within `ceilingTokens` (characters / 4). It starts at a
 * user message when one fits; otherwise at the call its tool results answer, behind a note that
 * earlier messages were left out, so a handoff whose last turns were all tool work still carries
 * them. A message longer than what is left of the budget is cut. Empty only when nothing but tool
 * results with no call before them remain.
 */
export function tailWithin(messages: readonly ChatMessage[], ceilingTokens: number): ChatMessage[] {
  const budget = Math.max(0, ceilingTokens) * 4;
  let start = messages.length;
  let used = 0;
  while (start > 0) {
    const size = charsOf(messages[start - 1]!);
    if (start < messages.length && used + size > budget) break;
    used += size;
    start -= 1;
  }
  const firstUser = messages.slice(start).findIndex((m) => m.role === 'user');
  if (firstUser !== -1) return clipped(messages.slice(start + firstUser), budget);
  // No user message fits: begin at an assistant message, so every tool result keeps its call.
  let from = start;
  while (from < messages.length && messages[from]!.role !== 'assistant') from += 1;
  if (from === messages.length) {
    from = Math.min(start, messages.length - 1);
    while (from > 0 && messages[from]!.role !== 'assistant') from -= 1;
    if (messages[from]?.role !== 'assistant') return [];
  }
  return [{ role: 'user', content: OMITTED_NOTE }, ...clipped(messages.slice(from), budget)];
}

/** Copies of `messages`, the newest kept whole first, each cut once the budget is spent. */
function clipped(messages: readonly ChatMessage[], budget: number): ChatMessage[] {
  let left = budget;
  const out: ChatMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = { ...messages[i]! };
    const keep = Math.max(left, MIN_KEPT_CHARS);
    if (m.content.length > keep) m.content = `${m.content.slice(0, keep)}${CUT_NOTE}`;
    left = Math.max(0, left - charsOf(m));
    out.unshift(m);
  }
  return out;
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
  if (!store.registry.setContinuation(previousId, nextThreadId)) {
    const other = store.registry.getThread(previousId)?.continuation_thread_id;
    throw new RyeError(
      'VALIDATION',
      `Thread ${previousId} is already continued by ${other ?? 'another thread'}: a chain has one continuation`,
      { hint: `Resume the chain again: it continues from its last thread${other ? ` (${other})` : ''}.` },
    );
  }
  const root = store.registry.getThread(previousId)?.chain_root_id ?? previousId;
  store.registry.setChainInfo(nextThreadId, root, previousId);
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
