/**
 * Where a run stands, read from its own `transcript.jsonl`: the conversation so far, what it cost,
 * and the calls that started but never recorded a result. The run phase starts from this when a
 * thread's process died mid-run (SIGKILL, a crash, a lost machine) and its job runs again, so no
 * completed tool call is run twice and no response is paid for twice.
 *
 * The transcript is trusted only as far as it proves: every checkpoint must verify under the
 * host's trust, and the lines after the last one (which no signature covers yet) are accepted only
 * as this run's own log: a regular file owned by this user that nobody else may write, every line
 * this thread's, turns never going back before the last checkpoint, and no end event.
 */
import { closeSync, ftruncateSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { RyeError } from '@ryeos/lillux';
import { resumeMessages } from '../persistence/reconstruct.js';
import type { Trust } from '../persistence/signer.js';
import type { TranscriptEvent } from '../persistence/transcript.js';
import { verifyTranscript } from '../persistence/transcript-verify.js';
import type { ChatMessage, ToolCall } from '../provider/types.js';
import { type ThreadCost, ZERO_COST } from '../store/types.js';

/** What the model is told about a call whose run was cut off with its process. */
export const INTERRUPTED_CALL_RESULT =
  'The call was interrupted: the thread stopped while it ran, so it may or may not have taken effect. Check its effect before calling it again.';

export interface ResumePoint {
  /** The conversation so far; each interrupted call is answered with `INTERRUPTED_CALL_RESULT`. */
  messages: ChatMessage[];
  /** The system prompt the run was started with (its hooks are not run again). */
  system: string;
  /** Every recorded response's tokens and spend, summed in order as the loop sums them. */
  cost: ThreadCost;
  /** The highest turn any event recorded. */
  lastTurn: number;
  /** Calls with a `tool_call_start` and no `tool_call_result`. */
  interrupted: ToolCall[];
}

export interface ResumeOptions {
  threadId: string;
  trust: Trust;
  /** USD per million tokens, as the loop prices a response. */
  pricing?: { input?: number; output?: number };
}

const END_EVENTS = new Set(['thread_completed', 'thread_error', 'thread_cancelled', 'thread_continued']);

function refuse(path: string, why: string): never {
  throw new RyeError('INTEGRITY', `Cannot resume from ${path}: ${why}`, {
    hint: 'The thread cannot continue from this transcript; cancel it (rye thread cancel) and start it again.',
  });
}

/** Only this user may have written the unsigned tail: the file is ours and nobody else can write it. */
function checkOwnership(path: string): void {
  const stat = lstatSync(path);
  if (!stat.isFile()) refuse(path, 'it is not a regular file');
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) refuse(path, `it belongs to user ${stat.uid}, not this user`);
  if ((stat.mode & 0o022) !== 0) refuse(path, 'group or others may write it');
}

/**
 * The transcript's complete lines, as events; a last line cut short by the kill is dropped from
 * the file (it lies after the last checkpoint, so nothing signed is touched) and from the result.
 */
function readEvents(path: string): { events: TranscriptEvent[]; tailStart: number } {
  const bytes = readFileSync(path);
  const end = bytes.lastIndexOf(0x0a) + 1;
  if (end < bytes.length) {
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, end);
    } finally {
      closeSync(fd);
    }
  }
  const events: TranscriptEvent[] = [];
  let tailStart = 0;
  let start = 0;
  for (let line = 1; start < end; line++) {
    const stop = bytes.indexOf(0x0a, start);
    const text = bytes.toString('utf8', start, stop);
    start = stop + 1;
    if (text.trim() === '') continue;
    let event: TranscriptEvent;
    try {
      event = JSON.parse(text) as TranscriptEvent;
    } catch {
      refuse(path, `line ${line} is not valid JSON`);
    }
    if (typeof event?.event_type !== 'string' || typeof event.payload !== 'object' || !event.payload)
      refuse(path, `line ${line} is not an event`);
    events.push(event);
    if (event.event_type === 'checkpoint') tailStart = events.length;
  }
  return { events, tailStart };
}

function turnOf(event: TranscriptEvent): number | undefined {
  const turn = event.payload.turn;
  return typeof turn === 'number' && Number.isFinite(turn) ? turn : undefined;
}

/** The unsigned tail continues the signed prefix: turns never go back, and the thread has not ended. */
function checkTail(path: string, events: readonly TranscriptEvent[], tailStart: number): void {
  const checkpoint = events[tailStart - 1];
  let floor = checkpoint ? (turnOf(checkpoint) ?? 0) : 0;
  for (const event of events.slice(tailStart)) {
    if (END_EVENTS.has(event.event_type)) refuse(path, `the thread already ended (${event.event_type})`);
    const turn = turnOf(event);
    if (turn === undefined) continue;
    if (turn < floor) refuse(path, `an unsigned line of turn ${turn} follows turn ${floor}`);
    floor = turn;
  }
  for (const event of events.slice(0, tailStart))
    if (END_EVENTS.has(event.event_type)) refuse(path, `the thread already ended (${event.event_type})`);
}

function usageCost(events: readonly TranscriptEvent[], pricing: ResumeOptions['pricing']): ThreadCost {
  const cost: ThreadCost = { ...ZERO_COST };
  for (const { event_type, payload } of events) {
    if (event_type !== 'response_usage') continue;
    const input = Number(payload.input_tokens) || 0;
    const output = Number(payload.output_tokens) || 0;
    cost.input_tokens += input;
    cost.output_tokens += output;
    cost.spend += (input * (pricing?.input ?? 0) + output * (pricing?.output ?? 0)) / 1e6;
    if (payload.stream_error !== true) cost.turns += 1;
  }
  const first = events[0]?.timestamp;
  const last = events.at(-1)?.timestamp;
  if (typeof first === 'number' && typeof last === 'number')
    cost.elapsed_seconds = Math.max(0, Math.round((last - first) * 100) / 100);
  return cost;
}

function interruptedCalls(events: readonly TranscriptEvent[]): ToolCall[] {
  const answered = new Set<string>();
  for (const { event_type, payload } of events)
    if (event_type === 'tool_call_result') answered.add(String(payload.call_id));
  const calls: ToolCall[] = [];
  for (const { event_type, payload } of events) {
    if (event_type !== 'tool_call_start' || answered.has(String(payload.call_id))) continue;
    const input = payload.input;
    calls.push({
      id: String(payload.call_id),
      name: String(payload.tool),
      input:
        typeof input === 'object' && input !== null && !Array.isArray(input)
          ? (input as Record<string, unknown>)
          : {},
    });
  }
  return calls;
}

/**
 * Where the run recorded in `path` stands, or undefined when its conversation has not begun (no
 * `cognition_in`: the run starts afresh). Throws INTEGRITY when the transcript cannot be trusted.
 */
export async function readResumePoint(
  path: string,
  options: ResumeOptions,
): Promise<ResumePoint | undefined> {
  try {
    checkOwnership(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const verified = await verifyTranscript(path, options.trust, 'lenient', { threadId: options.threadId });
  if (!verified.valid) refuse(path, verified.error);
  const { events, tailStart } = readEvents(path);
  if (!events.some((event) => event.event_type === 'cognition_in')) return undefined;
  checkTail(path, events, tailStart);
  const interrupted = interruptedCalls(events);
  const cut = new Set(interrupted.map((call) => call.id));
  const messages = resumeMessages(events).map((message) =>
    message.role === 'tool' && cut.has(message.tool_call_id ?? '')
      ? { ...message, content: INTERRUPTED_CALL_RESULT, is_error: true }
      : message,
  );
  const system = events.find((event) => event.event_type === 'system_prompt')?.payload.text;
  if (typeof system !== 'string') refuse(path, 'it records no system prompt');
  let lastTurn = 0;
  for (const event of events) lastTurn = Math.max(lastTurn, turnOf(event) ?? 0);
  return {
    messages,
    system,
    cost: usageCost(events, options.pricing),
    lastTurn,
    interrupted,
  };
}
