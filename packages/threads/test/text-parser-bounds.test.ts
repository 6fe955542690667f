/**
 * What the text-mode parser sends back about a call it could not read stays bounded and whole
 * (issue 28 points 3, 6, 7): no half characters, no overlong names repeated, linear on `<invoke>`.
 */
import { describe, expect, it } from 'vitest';
import {
  parseParameters,
  type ScanWork,
  type TextParserEvent,
  type TextParserLimits,
  TextToolParser,
} from '../src/streaming/text-parser.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function parse(input: string, limits?: Partial<TextParserLimits>) {
  const parser = new TextToolParser(limits);
  const events: TextParserEvent[] = [...parser.feed(input), ...parser.end()];
  return { events, fullText: parser.fullText() };
}

const errorsOf = (events: TextParserEvent[]) =>
  events.flatMap((event) => (event.type === 'error' ? [event] : []));

describe('an unreadable call is quoted back whole (point 3)', () => {
  it('its excerpt never ends in half a character, whatever comes before the emoji', () => {
    for (const pad of ['', 'a', 'ab']) {
      const [error] = errorsOf(
        parse(`<tool_use id="a${pad}" name="read">{${'😀'.repeat(400)}</tool_use>`).events,
      );
      expect(error?.call?.excerpt.length).toBeLessThanOrEqual(501);
      expect(LONE_SURROGATE.test(error!.call!.excerpt), JSON.stringify(pad)).toBe(false);
    }
  });

  it('fullText stops at text_buffer_max without halving a character', () => {
    for (const max of [9, 10]) {
      const { fullText, events } = parse(`a${'😀'.repeat(10)}`, { textBufferMax: max });
      expect(LONE_SURROGATE.test(fullText)).toBe(false);
      expect(fullText.length).toBeLessThanOrEqual(max);
      // The text events themselves still carry every character.
      expect(events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('')).toBe(`a${'😀'.repeat(10)}`);
    }
  });
});

describe('an overlong tool name is not repeated (point 6)', () => {
  const name = 'N'.repeat(300_000);
  const cases = {
    'a <tool_use> with a bad body': `<tool_use id="a" name="${name}">nope</tool_use>`,
    'a JSON call whose input is not an object': JSON.stringify({ type: 'tool_use', name, input: 'x' }),
    'an unterminated <tool_use>': `<tool_use id="a" name="${name}">{"path"`,
  };
  for (const [label, input] of Object.entries(cases)) {
    it(`${label}: message and call stay short, and the call names no tool`, () => {
      const [error] = errorsOf(parse(input).events);
      expect(error).toBeDefined();
      expect(error!.message.length).toBeLessThan(600);
      expect(error!.call?.name).toBeUndefined();
      expect(error!.call!.excerpt.length).toBeLessThanOrEqual(501);
    });
  }

  it('a long JSON value quoted in the error is cut too', () => {
    const [error] = errorsOf(parse(`<tool_use name="read">"${'V'.repeat(100_000)}"</tool_use>`).events);
    expect(error!.message).toContain('body is not a JSON object: got "VVV');
    expect(error!.message.length).toBeLessThan(600);
  });

  it('a name of ordinary length is still reported', () => {
    const [error] = errorsOf(parse('<tool_use name="rye_file_system_read">nope</tool_use>').events);
    expect(error!.call?.name).toBe('rye_file_system_read');
    expect(error!.message).toContain('name="rye_file_system_read"');
  });
});

describe('legacy <invoke> parameters are read in one pass (point 7)', () => {
  it('reads values as before: JSON when they parse, raw text otherwise, first close wins', () => {
    expect(
      parseParameters(
        '<parameter name="q">a b</parameter>\n<parameter name = \'n\' >5</parameter>' +
          '<parameter name="o">{"deep":true}</parameter><parameter name="x"><parameter name="y">1</parameter>',
      ),
    ).toEqual({ q: 'a b', n: 5, o: { deep: true }, x: '<parameter name="y">1' });
    expect(parseParameters('<parameter nam="a">1</parameter><parameter name="b">2</parameter>')).toEqual({
      b: 2,
    });
    expect(parseParameters('<parameter name="a">1')).toEqual({});
  });

  it('looks at each character of a body of unclosed parameters a bounded number of times', () => {
    for (const count of [1_000, 10_000, 50_000]) {
      const body = '<parameter name="a">'.repeat(count);
      const work: ScanWork = { scanned: 0 };
      expect(parseParameters(body, work)).toEqual({});
      expect(work.scanned).toBeLessThanOrEqual(2 * body.length);
    }
    const closed = '<parameter name="a">1</parameter>'.repeat(50_000);
    const work: ScanWork = { scanned: 0 };
    expect(parseParameters(closed, work)).toEqual({ a: 1 });
    expect(work.scanned).toBeLessThanOrEqual(2 * closed.length);
  });
});
