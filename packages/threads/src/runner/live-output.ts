/**
 * A running tool's output as droppable `tool_output` events, whole lines at a time, so a watcher
 * (`rye threads tail --follow`, the viewer) sees work while it happens. What the model reads back
 * is still the call's result alone; these lines are for people.
 */

export type OutputStream = 'stdout' | 'stderr';

/** A partial line longer than this is written as it is (a progress bar never ends its line). */
const MAX_PARTIAL_LINE = 4096;

/** Bytes of one call's live output recorded at most, as written (JSON-escaped); rye/bash echoes as much. */
export const LIVE_OUTPUT_CALL_MAX_BYTES = 256 * 1024;

export interface LiveOutputLog {
  emit(eventType: string, payload: Record<string, unknown>): void;
}

/** One call's live output; `end()` writes what is left and ignores anything later. */
export class LiveToolOutput {
  private readonly partial: Record<OutputStream, string> = { stdout: '', stderr: '' };
  private ended = false;
  /** Bytes recorded so far, counted as the transcript writes them. */
  private recorded = 0;
  private capped = false;

  constructor(
    private readonly log: LiveOutputLog,
    private readonly callId: string,
    private readonly turn: number,
  ) {}

  /**
   * The executor's `onOutput`: chunks cut anywhere, joined back into lines. Only stderr: a tool's
   * stdout is its result (recorded whole when the call ends), its stderr what it says meanwhile.
   */
  readonly onOutput = (chunk: string, stream: OutputStream): void => {
    if (this.ended || chunk === '' || stream !== 'stderr') return;
    const text = this.partial[stream] + chunk;
    const cut = text.lastIndexOf('\n') + 1;
    if (cut > 0) this.write(stream, text.slice(0, cut));
    const rest = text.slice(cut);
    if (rest.length > MAX_PARTIAL_LINE) {
      this.write(stream, rest);
      this.partial[stream] = '';
    } else {
      this.partial[stream] = rest;
    }
  };

  /** Called before the call's result is recorded, so its output precedes it in the transcript. */
  end(): void {
    if (this.ended) return;
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream]) this.write(stream, `${this.partial[stream]}\n`);
      this.partial[stream] = '';
    }
    this.ended = true;
  }

  private write(stream: OutputStream, text: string): void {
    if (this.capped) return;
    const size = Buffer.byteLength(JSON.stringify(text), 'utf8');
    if (this.recorded + size > LIVE_OUTPUT_CALL_MAX_BYTES) {
      this.capped = true;
      text = `[live output past ${LIVE_OUTPUT_CALL_MAX_BYTES} bytes not shown; the call's result is recorded]\n`;
    }
    this.recorded += size;
    try {
      this.log.emit('tool_output', { call_id: this.callId, stream, text, turn: this.turn });
    } catch {
      // Droppable: a transcript that cannot take a live line must not fail the tool call.
    }
  }
}
