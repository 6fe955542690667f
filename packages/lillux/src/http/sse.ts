/**
 * Bytes → SSE events: a streaming UTF-8 decoder feeding eventsource-parser. Chunks may split
 * anywhere (inside a multi-byte character, inside `\r\n`); nothing is re-copied per chunk beyond
 * the parser's own partial line.
 */
import { isAscii } from 'node:buffer';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { SseEvent } from './types.js';

const STREAM = { stream: true } as const;
const CR = 13;
const BOM = 0xfeff;

/**
 * Whether a streaming decoder may hold bytes back after `bytes`: it ends inside a UTF-8 sequence (a lead
 * byte without all its continuation bytes). `before` is the answer for the previous chunk, needed when
 * `bytes` is only continuation bytes. Errs towards `true` on invalid input.
 */
function mayEndMidCharacter(bytes: Uint8Array, before: boolean): boolean {
  const n = bytes.length;
  const look = Math.min(n, 3);
  for (let i = 1; i <= look; i++) {
    const c = bytes[n - i]!;
    if (c < 0x80) return false;
    if (c >= 0xc0) return i < (c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2);
  }
  // Only continuation bytes seen: with more bytes before them the sequence is complete or invalid
  // (nothing held back); at the start of the chunk they may continue the previous chunk's sequence.
  return n <= 3 ? before : false;
}

/** Default cap on one buffered partial line / event, in characters. */
export const DEFAULT_MAX_EVENT_CHARS = 64 * 1024 * 1024;

export class SseDecoder {
  /** Streaming decoder for chunks with multi-byte characters; BOM handled in `feed`. */
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** All-ASCII chunks decode several times faster without the streaming state. */
  private readonly asciiDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private pending = false;
  private started = false;
  private readonly parser: EventSourceParser;
  private endsWithCr = false;
  /** Set when the parser gave up (an event larger than the cap); further input is ignored. */
  failure: string | undefined;

  constructor(onEvent: (event: SseEvent) => void, maxEventChars: number = DEFAULT_MAX_EVENT_CHARS) {
    this.parser = createParser({
      onEvent: (m: EventSourceMessage) => {
        onEvent(
          m.id === undefined
            ? { event: m.event ?? 'message', data: m.data }
            : { event: m.event ?? 'message', data: m.data, id: m.id },
        );
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') {
          this.failure = `SSE event larger than ${maxEventChars} characters`;
        }
      },
      maxBufferSize: maxEventChars,
    });
  }

  /** Feeds one chunk of bytes. */
  push(bytes: Uint8Array): void {
    if (!this.pending && isAscii(bytes)) {
      this.feed(this.asciiDecoder.decode(bytes));
      return;
    }
    this.pending = mayEndMidCharacter(bytes, this.pending);
    this.feed(this.decoder.decode(bytes, STREAM));
  }

  /** Flushes the decoder at end of stream. An event without its closing blank line is dropped (SSE spec). */
  end(): void {
    this.feed(this.decoder.decode());
    // The parser holds back a trailing `\r` in case `\n` follows; at the end it is a complete line break.
    if (this.endsWithCr) this.feed('\n');
  }

  private feed(input: string): void {
    let text = input;
    if (!this.started && text !== '') {
      this.started = true;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    if (text === '' || this.failure !== undefined) return;
    this.endsWithCr = text.charCodeAt(text.length - 1) === CR;
    this.parser.feed(text);
  }
}
