/**
 * `rye threads tail <id> [--follow] [--json]`: a thread's transcript as a person reads it — who
 * said what, which tool ran with what and what came back — or the raw JSON lines with `--json`.
 * `--follow` keeps printing events as they are written (text as it streams) until the thread
 * ends.
 */
import { closeSync, existsSync, watch } from 'node:fs';
import { join } from 'node:path';
import { clipText } from '@ryeos/lillux';
import { isToolRunRow, openRegularFile, readRange } from '@ryeos/threads';
import type { CliIo } from '../cli/io.js';
import { printable, printableJson } from '../cli/printable.js';

interface Event {
  event_type: string;
  payload: Record<string, unknown>;
}

/** Transcript bytes read at a time. */
const TAIL_CHUNK_BYTES = 1024 * 1024;
/** A transcript line longer than this is not an event tail prints (the runner caps what it writes). */
const TAIL_LINE_MAX_BYTES = 16 * 1024 * 1024;

const TERMINAL = new Set(['completed', 'error', 'cancelled', 'continued']);

function short(value: unknown, max = 240): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${clipText(flat, max)}…` : flat;
}

/**
 * What starts every line of the model's streamed text: no status line starts with it, so text the
 * model writes can never pass for a tool call, a result or a thread's end.
 */
export const MODEL_LINE = '» ';

/**
 * Streamed model text with every line of it (continuations too) marked as the model's;
 * `continuing` when it goes on a line of model text already printed.
 */
function markModelLines(text: string, continuing: boolean): string {
  let out = '';
  text.split('\n').forEach((piece, index) => {
    if (index > 0) out += '\n';
    if (piece === '') return;
    if (index > 0 || !continuing) out += MODEL_LINE;
    out += piece;
  });
  return out;
}

/** A running tool's live lines, each marked as the tool's own. */
function toolLines(text: string): string {
  const lines = text.endsWith('\n') ? text.slice(0, -1) : text;
  return `${lines
    .split('\n')
    .map((line) => `  │ ${line}`)
    .join('\n')}\n`;
}

/**
 * Events in the order they were written, as a person reads them: assistant text where the model
 * wrote it (before the tool calls it made), not where its whole answer was recorded at the end
 * of the turn.
 */
export class TailPrinter {
  /** Streamed assistant text of the turn not yet printed (without --follow it is printed whole). */
  private text = '';
  private textTurn: unknown;
  /** Turns whose text streamed: their `cognition_out` is not printed again. */
  private readonly streamed = new Set<unknown>();
  /** Live events were capped: later answers are printed from their `cognition_out`. */
  private capped = false;
  private midLine = false;

  constructor(private readonly follow: boolean) {}

  /** What to print for `event` (possibly nothing yet). */
  next(event: Event): string {
    const p = event.payload ?? {};
    if (event.event_type === 'live_events_capped') this.capped = true;
    if (event.event_type === 'cognition_out_delta' && !this.capped) {
      this.streamed.add(p.turn);
      if (this.follow) return this.modelText(String(p.text ?? ''));
      if (this.text && this.textTurn !== p.turn) return this.pendingText() + this.next(event);
      this.textTurn = p.turn;
      this.text += String(p.text ?? '');
      return '';
    }
    let out = this.pendingText();
    if (event.event_type === 'cognition_out' && this.streamed.has(p.turn)) {
      if (p.is_partial)
        out += this.lineStart(`[turn ${String(p.turn)}] (answer cut off: ${short(p.error)})\n`);
      else if (this.follow && this.midLine) out += this.track('\n');
      return out;
    }
    const line = describeEvent(event, this.follow);
    return line === undefined ? out : out + this.lineStart(line);
  }

  /** Whatever is still held (the end of the transcript so far). */
  end(): string {
    return this.pendingText();
  }

  private pendingText(): string {
    if (!this.text) return '';
    const turn = typeof this.textTurn === 'number' ? `[turn ${this.textTurn}] ` : '';
    const out = `${turn}assistant: ${short(this.text)}\n`;
    this.text = '';
    return out;
  }

  /** A line of its own, after streamed text that did not end its line. */
  private lineStart(line: string): string {
    const text = this.midLine && !line.startsWith('\n') ? `\n${line}` : line;
    return this.track(text);
  }

  private modelText(text: string): string {
    return this.track(markModelLines(text, this.midLine));
  }

  private track(text: string): string {
    if (text) this.midLine = !text.endsWith('\n');
    return text;
  }
}

/** One event as a line (or a piece of one, for streamed text); undefined to skip it. */
export function describeEvent(event: Event, follow: boolean): string | undefined {
  const p = event.payload ?? {};
  const turn = typeof p.turn === 'number' ? `[turn ${p.turn}] ` : '';
  switch (event.event_type) {
    case 'tool_output':
      return typeof p.text === 'string' && p.text !== '' ? toolLines(p.text) : undefined;
    case 'live_events_capped':
      return `== live output past ${String(p.cap_bytes)} bytes was not recorded\n`;
    case 'cognition_in':
      return `${turn}${String(p.role ?? 'user')}: ${short(p.text)}\n`;
    case 'cognition_out_delta':
      return follow ? markModelLines(String(p.text ?? ''), false) : undefined;
    case 'cognition_out':
      // A turn whose text streamed was printed from its deltas (TailPrinter).
      return `${turn}assistant: ${short(p.text)}${p.is_partial ? ` (cut off: ${short(p.error)})` : ''}\n`;
    case 'cognition_reasoning':
      return follow ? undefined : `${turn}thinking: ${short(p.text)}\n`;
    case 'tool_call_start':
      return `${turn}→ ${String(p.tool)} ${short(p.input, 160)}\n`;
    case 'tool_call_result': {
      const took = typeof p.duration_ms === 'number' ? ` (${p.duration_ms} ms)` : '';
      return p.error
        ? `${turn}✗ ${String(p.call_id)}${took}: ${short(p.error, 200)}\n`
        : `${turn}← ${String(p.call_id)}${took}: ${short(p.output, 200)}\n`;
    }
    case 'capabilities_attenuated': {
      const grants = Array.isArray(p.grants) ? p.grants.map(String).join(', ') : short(p.grants);
      const parent = p.parent_thread_id ? ` by parent ${String(p.parent_thread_id)}` : '';
      return `== capabilities attenuated${parent}, not granted: ${grants}\n`;
    }
    case 'thread_handoff':
      return `== handed off to ${String(p.new_thread_id)}\n`;
    case 'thread_resumed':
      return `== resumed as ${String(p.new_thread_id)}\n`;
    case 'context_limit_reached':
      return `== context window ${Math.round(Number(p.usage_ratio) * 100)}% full\n`;
    case 'thread_completed':
    case 'thread_error':
    case 'thread_cancelled':
    case 'thread_continued': {
      const cost = (p.cost ?? {}) as Record<string, unknown>;
      const status = event.event_type.slice('thread_'.length);
      return `== ${status}: ${cost.turns ?? 0} turns, ${(Number(cost.input_tokens ?? 0) + Number(cost.output_tokens ?? 0)).toLocaleString('en')} tokens, $${Number(cost.spend ?? 0).toFixed(4)}${p.error ? ` — ${short(p.error, 200)}` : ''}\n`;
    }
    default:
      return undefined;
  }
}

/** What the registry holds of a thread, as far as a tool run's tail needs it. */
export interface TailedRow {
  thread_id: string;
  directive: string;
  status: string;
  result: Record<string, unknown> | null;
}

/**
 * An async tool run writes no transcript: its result, stored in the registry when it ends, is
 * what it said (as `rye execute` would have printed it). Undefined for a thread that is not one.
 */
export function describeToolRun(row: TailedRow | undefined, json: boolean): string | undefined {
  if (!row || !isToolRunRow(row)) return undefined;
  // The registry is an unsigned file in the project, which a repository can ship: what it stores
  // is printed as data, never dressed as our advice (no fix rendered as a `rye` command).
  const envelope = row.result?.envelope;
  if (typeof envelope === 'object' && envelope !== null) {
    if (json) return printableJson(`${JSON.stringify(envelope)}\n`);
    const ref = String((envelope as { item_id?: unknown }).item_id ?? row.directive);
    return printableJson(
      `== ${row.status}: ${ref} (its result as the project's registry stores it)\n${JSON.stringify(envelope, null, 2)}\n`,
    );
  }
  if (json) return undefined;
  const ref = `tool:${row.directive.slice('tool/'.length)}`;
  const error = row.result?.error;
  const note = !isTerminal(row.status)
    ? ' (its result is printed here when it ends: --follow waits for it)'
    : typeof error === 'string'
      ? ` — ${short(error, 200)}`
      : '';
  return printable(`== ${row.status}: ${ref}${note}\n`);
}

/**
 * Prints the transcript, then (follow) what is appended until `ended()` says the thread ended;
 * says whether there was a transcript to print.
 */
export async function tailTranscript(
  io: CliIo,
  dir: string,
  options: { follow: boolean; json: boolean; ended: () => Promise<boolean>; signal?: AbortSignal },
): Promise<{ transcript: boolean }> {
  const path = join(dir, 'transcript.jsonl');
  const printer = new TailPrinter(options.follow);
  const lines = new LineReader();
  let offset = 0;
  const printLine = (line: string) => {
    if (!line.trim()) return;
    if (options.json) {
      // A line the runner wrote holds no raw control (JSON escapes them); one written by
      // something else is shown as safely as a person's text.
      io.stdout(`${printable(line)}\n`);
      return;
    }
    let event: Event;
    try {
      event = JSON.parse(line) as Event;
    } catch {
      return;
    }
    const text = printer.next(event);
    if (text) io.stdout(printable(text));
  };
  const drain = () => {
    // A link or special file a repository planted is refused (a typed error), never followed.
    const file = openRegularFile(path);
    if (!file) return;
    try {
      // Bounded reads: a huge transcript streams through instead of being held whole.
      while (offset < file.size) {
        const chunk = readRange(file.fd, offset, Math.min(file.size - offset, TAIL_CHUNK_BYTES));
        if (chunk.length === 0) break;
        offset += chunk.length;
        for (const line of lines.push(chunk)) printLine(line);
      }
    } finally {
      closeSync(file.fd);
    }
  };
  const drainAll = () => {
    drain();
    const rest = printer.end();
    if (rest) io.stdout(printable(rest));
  };
  if (!options.follow) {
    drainAll();
    return { transcript: existsSync(path) };
  }
  drain();
  await new Promise<void>((resolve, reject) => {
    let watcher: ReturnType<typeof watch> | undefined;
    const drainOrStop = () => {
      try {
        drain();
      } catch (error) {
        stop(error);
      }
    };
    try {
      watcher = watch(dir, drainOrStop);
    } catch {
      watcher = undefined;
    }
    let finished = false;
    const timer = setInterval(() => {
      drainOrStop();
      if (finished) return;
      if (options.signal?.aborted) return finish();
      options.ended().then(
        (ended) => ended && finish(),
        () => undefined, // a locked registry: asked again at the next tick
      );
    }, 250);
    function stop(error: unknown) {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      watcher?.close();
      reject(error);
    }
    function finish() {
      if (finished) return;
      try {
        drainAll();
      } catch (error) {
        return stop(error);
      }
      finished = true;
      clearInterval(timer);
      watcher?.close();
      resolve();
    }
    options.signal?.addEventListener('abort', finish, { once: true });
  });
  return { transcript: existsSync(path) };
}

/**
 * Whole lines out of byte chunks (a character cut between chunks is joined first); a line longer
 * than TAIL_LINE_MAX_BYTES is skipped rather than held.
 */
class LineReader {
  private rest: Buffer = Buffer.alloc(0);
  private skipping = false;

  push(chunk: Buffer): string[] {
    let bytes = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    if (this.skipping) {
      const newline = bytes.indexOf(0x0a);
      if (newline < 0) return [];
      this.skipping = false;
      bytes = bytes.subarray(newline + 1);
    }
    const end = bytes.lastIndexOf(0x0a) + 1;
    this.rest = Buffer.from(bytes.subarray(end));
    if (this.rest.length > TAIL_LINE_MAX_BYTES) {
      this.rest = Buffer.alloc(0);
      this.skipping = true;
    }
    return end === 0
      ? []
      : bytes
          .subarray(0, end - 1)
          .toString('utf8')
          .split('\n');
  }
}

export function isTerminal(status: string | undefined): boolean {
  return status !== undefined && TERMINAL.has(status);
}
