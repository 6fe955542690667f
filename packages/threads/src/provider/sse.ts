/**
 * Bytes → SSE `data` payloads (spec threads §8.3: only `data:` counts, `event:` is ignored,
 * payloads are trimmed and empty ones skipped). Chunks may split anywhere, even inside a
 * multi-byte character.
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';

/** Cap on one buffered event, in characters: a provider event is never near this. */
const MAX_EVENT_CHARS = 32 * 1024 * 1024;

export class SseDataDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  private out: string[] = [];
  /** Set when an event went over the cap; the stream cannot be trusted after that. */
  failure: string | undefined;

  constructor() {
    this.parser = createParser({
      onEvent: (message) => {
        const data = message.data.trim();
        if (data !== '') this.out.push(data);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') {
          this.failure = `an SSE event larger than ${MAX_EVENT_CHARS} characters`;
        }
      },
      maxBufferSize: MAX_EVENT_CHARS,
    });
  }

  /** The payloads completed by this chunk. */
  push(bytes: Uint8Array): string[] {
    this.parser.feed(this.decoder.decode(bytes, { stream: true }));
    return this.take();
  }

  /** The payloads completed by the end of the body (a final event needs its blank line, per SSE). */
  end(): string[] {
    const rest = this.decoder.decode();
    if (rest !== '') this.parser.feed(rest);
    return this.take();
  }

  private take(): string[] {
    const out = this.out;
    this.out = [];
    return out;
  }
}
