/**
 * The SSE decoding path (bytes → TextDecoder → eventsource-parser → SseEvent) on a stream that has
 * every feature, split at every byte boundary, every pair of boundaries and many seeded random ones.
 */
import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../src/http/index.js';
import { SseDecoder } from '../src/http/sse.js';
import {
  chunkBytes,
  FEATURE_EVENTS,
  FEATURE_STREAM,
  randomCuts,
  seededRandom,
  splitBytes,
} from './helpers/http-server.js';

function decode(chunks: readonly Uint8Array[]): SseEvent[] {
  const events: SseEvent[] = [];
  const decoder = new SseDecoder((e) => events.push(e));
  for (const chunk of chunks) decoder.push(chunk);
  decoder.end();
  return events;
}

const bytes = new TextEncoder().encode(FEATURE_STREAM);

describe('SSE decoding', () => {
  it('parses the whole stream in one chunk', () => {
    expect(decode([bytes])).toEqual(FEATURE_EVENTS);
  });

  it('omits id when the event has none and defaults event to "message"', () => {
    const [, second] = decode([bytes]);
    expect(second).toEqual({ event: 'message', data: 'line one\nline two\n' });
    expect(Object.keys(second!)).toEqual(['event', 'data']);
  });

  it('gives identical events for every single split point', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(decode(splitBytes(bytes, [cut])), `cut at ${cut}`).toEqual(FEATURE_EVENTS);
    }
  });

  it('gives identical events for every pair of split points', () => {
    for (let a = 1; a < bytes.length; a++) {
      for (let b = a + 1; b < bytes.length; b++) {
        const got = decode(splitBytes(bytes, [a, b]));
        if (JSON.stringify(got) !== JSON.stringify(FEATURE_EVENTS)) {
          expect(got, `cuts at ${a}, ${b}`).toEqual(FEATURE_EVENTS);
        }
      }
    }
  });

  it('gives identical events for 500 seeded random splittings', () => {
    const random = seededRandom(0x5eed);
    for (let run = 0; run < 500; run++) {
      const cuts = randomCuts(bytes.length, 1 + Math.floor(random() * 40), random);
      expect(decode(splitBytes(bytes, cuts)), `cuts ${cuts.join(',')}`).toEqual(FEATURE_EVENTS);
    }
  });

  it('gives identical events one byte at a time', () => {
    expect(decode(chunkBytes(bytes, 1))).toEqual(FEATURE_EVENTS);
  });

  it('decodes a 4-byte character split over four chunks', () => {
    const emoji = new TextEncoder().encode('data: 😀\n\n');
    const at = emoji.indexOf(0xf0);
    expect(decode(splitBytes(emoji, [at + 1, at + 2, at + 3]))).toEqual([{ event: 'message', data: '😀' }]);
  });

  it('replaces a truncated character with U+FFFD even when ASCII chunks follow', () => {
    const head = new TextEncoder().encode('data: a');
    const tail = new TextEncoder().encode('b\n\n');
    const truncated = [head, new Uint8Array([0xf0]), new Uint8Array([0x9f]), tail];
    expect(decode(truncated)).toEqual([{ event: 'message', data: 'a\uFFFDb' }]);
    const lone = [head, new Uint8Array([0xe6, 0x97]), tail];
    expect(decode(lone)).toEqual([{ event: 'message', data: 'a\uFFFDb' }]);
    const stray = [head, new Uint8Array([0x61, 0x80]), tail];
    expect(decode(stray)).toEqual([{ event: 'message', data: 'aa\uFFFDb' }]);
  });

  it('decodes random (also invalid) UTF-8 split anywhere exactly like a one-shot TextDecoder', () => {
    const random = seededRandom(42);
    const pool = [
      0x61, 0x7a, 0x20, 0xc3, 0xa9, 0xe6, 0x97, 0xa5, 0xf0, 0x9f, 0x98, 0x80, 0x80, 0xbf, 0xff, 0xc0,
    ];
    for (let run = 0; run < 400; run++) {
      const payload = Uint8Array.from({ length: 1 + Math.floor(random() * 40) }, () => {
        return pool[Math.floor(random() * pool.length)]!;
      });
      const framed = new Uint8Array([...new TextEncoder().encode('data: '), ...payload, 10, 10]);
      const expected = new TextDecoder().decode(payload);
      const cuts = randomCuts(framed.length, 1 + Math.floor(random() * 12), random);
      expect(decode(splitBytes(framed, cuts)), `payload ${payload.join(',')} cuts ${cuts.join(',')}`).toEqual(
        [{ event: 'message', data: expected }],
      );
    }
  });

  it('keeps a U+FEFF that is not at the start of the stream', () => {
    const chunks = [new TextEncoder().encode('data: a\n\n'), new TextEncoder().encode('data: \uFEFFb\n\n')];
    expect(decode(chunks)).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: '\uFEFFb' },
    ]);
  });

  it('dispatches a final event ended by CR CR at end of stream', () => {
    expect(decode([new TextEncoder().encode('data: x\r\r')])).toEqual([{ event: 'message', data: 'x' }]);
    expect(decode(splitBytes('data: x\r\r', [8]))).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('drops an event left incomplete at end of stream (SSE spec)', () => {
    expect(decode([new TextEncoder().encode('data: a\n\ndata: partial\n')])).toEqual([
      { event: 'message', data: 'a' },
    ]);
  });

  it('strips a leading BOM', () => {
    expect(decode(splitBytes('\uFEFFdata: x\n\n', [1, 2]))).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('stops with a failure when one event outgrows the cap', () => {
    const events: SseEvent[] = [];
    const decoder = new SseDecoder((e) => events.push(e), 100);
    decoder.push(new TextEncoder().encode('data: ok\n\n'));
    decoder.push(new TextEncoder().encode(`data: ${'x'.repeat(200)}`));
    decoder.push(new TextEncoder().encode('\n\ndata: after\n\n'));
    decoder.end();
    expect(events).toEqual([{ event: 'message', data: 'ok' }]);
    expect(decoder.failure).toMatch(/larger than 100 characters/);
  });
});
