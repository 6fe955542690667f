import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../src/provider/types.js';
import { type TextParserEvent, type TextParserLimits, TextToolParser } from '../src/streaming/text-parser.js';

interface Run {
  events: TextParserEvent[];
  fullText: string;
}

/** Adjacent text events joined: how text is cut into events depends on the chunking, nothing else may. */
function normalize(events: readonly TextParserEvent[]): TextParserEvent[] {
  const out: TextParserEvent[] = [];
  for (const event of events) {
    const last = out[out.length - 1];
    if (event.type === 'text' && last?.type === 'text')
      out[out.length - 1] = { type: 'text', text: last.text + event.text };
    else out.push(event);
  }
  return out;
}

function run(chunks: readonly string[], limits?: Partial<TextParserLimits>): Run {
  const parser = new TextToolParser(limits);
  const events = chunks.flatMap((chunk) => parser.feed(chunk));
  events.push(...parser.end());
  return { events: normalize(events), fullText: parser.fullText() };
}

/**
 * Feeds `input` whole, split in two at every point, one character at a time, and (when short)
 * in three at every pair of points; all must agree. Returns the whole-input result.
 */
function runEverySplit(input: string, limits?: Partial<TextParserLimits>): Run {
  const whole = run([input], limits);
  for (let i = 0; i <= input.length; i++) {
    expect(run([input.slice(0, i), input.slice(i)], limits), `split at ${i}`).toEqual(whole);
  }
  expect(run(input.split(''), limits), 'one character at a time').toEqual(whole);
  if (input.length <= 100) {
    for (let i = 1; i < input.length; i++) {
      for (let j = i + 1; j < input.length; j++) {
        const chunks = [input.slice(0, i), input.slice(i, j), input.slice(j)];
        expect(run(chunks, limits), `split at ${i} and ${j}`).toEqual(whole);
      }
    }
  }
  return whole;
}

const text = (t: string): TextParserEvent => ({ type: 'text', text: t });
const call = (id: string, name: string, input: Record<string, unknown>): TextParserEvent => ({
  type: 'tool_complete',
  call: { id, name, input } satisfies ToolCall,
});
const error = (message: string | RegExp): unknown =>
  expect.objectContaining({
    type: 'error',
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });

describe('XML <tool_use> calls', () => {
  it('parses a call between text, at every chunk boundary', () => {
    const input =
      'Reading it. <tool_use id="toolu_1" name="rye_file_system_read">{"path":"a.txt"}</tool_use> Done.';
    expect(runEverySplit(input)).toEqual({
      events: [
        text('Reading it. '),
        call('toolu_1', 'rye_file_system_read', { path: 'a.txt' }),
        text(' Done.'),
      ],
      fullText: 'Reading it.  Done.',
    });
  });

  it('takes attributes in any order and quoting, whitespace around the body, and numbers missing ids', () => {
    const input =
      '<tool_use name=\'a\' id=\'x1\'>\n  {"k": [1, {"n": null}]}\n</tool_use>' +
      '<tool_use name="b">{}</tool_use>,<tool_use\n  name = "c" >{"z":true}</tool_use>';
    expect(runEverySplit(input).events).toEqual([
      call('x1', 'a', { k: [1, { n: null }] }),
      call('textcall_1', 'b', {}),
      text(','),
      call('textcall_2', 'c', { z: true }),
    ]);
  });

  it('treats an empty body and a self-closing tag as no arguments', () => {
    const input = '<tool_use name="a"></tool_use> <tool_use name="b" id="i"/>';
    expect(runEverySplit(input).events).toEqual([call('textcall_1', 'a', {}), text(' '), call('i', 'b', {})]);
  });

  it('reports a call without a name or with a non-object body, and goes on to the next', () => {
    const input =
      'a<tool_use id="1">{"x":1}</tool_use>b<tool_use name="r">[1]</tool_use>c' +
      '<tool_use name="s">{oops}</tool_use>d<tool_use name="ok">{"y":2}</tool_use>e';
    const { events, fullText } = runEverySplit(input);
    expect(events).toEqual([
      text('a'),
      error('<tool_use> call without a name attribute'),
      text('b'),
      error('<tool_use name="r"> body is not a JSON object: got an array'),
      text('c'),
      error(/^<tool_use name="s"> body is not a JSON object: /),
      text('d'),
      call('textcall_1', 'ok', { y: 2 }),
      text('e'),
    ]);
    expect(fullText).toBe('abcde');
  });

  it('emits text up to a possible tag at once and holds back only that suffix', () => {
    const parser = new TextToolParser();
    expect(parser.feed('Hello <tool_')).toEqual([text('Hello ')]);
    expect(parser.feed('use name="x">{"a"')).toEqual([]);
    expect(parser.feed(':1}</tool_use')).toEqual([]);
    expect(parser.feed('> bye')).toEqual([call('textcall_1', 'x', { a: 1 }), text(' bye')]);
    expect(parser.feed(' <')).toEqual([text(' ')]);
    expect(parser.feed('b')).toEqual([text('<b')]);
    expect(parser.end()).toEqual([]);
    expect(parser.fullText()).toBe('Hello  bye <b');
  });
});

describe('text that only looks like a tag', () => {
  it('comes out as text once it cannot be a tag', () => {
    const input =
      'if a < b && c<d: <tool> <toolbox> <tool_user> <invoker> <tool_use-x> <<tool_use name="n">{}</tool_use>';
    expect(runEverySplit(input)).toEqual({
      events: [
        text('if a < b && c<d: <tool> <toolbox> <tool_user> <invoker> <tool_use-x> <'),
        call('textcall_1', 'n', {}),
      ],
      fullText: 'if a < b && c<d: <tool> <toolbox> <tool_user> <invoker> <tool_use-x> <',
    });
  });

  it('gives up on an opening tag whose attributes are prose', () => {
    const input = 'The <tool_use element is described below. <tool_use name="x">{}</tool_use>';
    expect(runEverySplit(input).events).toEqual([
      text('The <tool_use element is described below. '),
      call('textcall_1', 'x', {}),
    ]);
  });

  it('flushes a held tag prefix as text at the end', () => {
    expect(runEverySplit('see <tool_us')).toEqual({
      events: [text('see <tool_us')],
      fullText: 'see <tool_us',
    });
  });
});

describe('JSON tool_use objects', () => {
  it('parses a top-level object and an array of them, at every chunk boundary', () => {
    const input =
      'One: {"type":"tool_use","id":"t1","name":"read","input":{"path":"a"}} and two: ' +
      '[{"type":"tool_use","name":"a","input":{}}, {"input":{"n":1},"name":"b","type":"tool_use"}].';
    expect(runEverySplit(input)).toEqual({
      events: [
        text('One: '),
        call('t1', 'read', { path: 'a' }),
        text(' and two: '),
        call('textcall_1', 'a', {}),
        call('textcall_2', 'b', { n: 1 }),
        text('.'),
      ],
      fullText: 'One:  and two: .',
    });
  });

  it('does not close on braces, brackets or escaped quotes inside strings', () => {
    const input = 'x {"type":"tool_use","name":"w","input":{"s":"}]{[\\"}\\\\","u":"\\u00e9"}} y';
    expect(runEverySplit(input).events).toEqual([
      text('x '),
      call('textcall_1', 'w', { s: '}]{["}\\', u: 'é' }),
      text(' y'),
    ]);
  });

  it('leaves JSON that is not a call, and things that are not JSON, as text', () => {
    const input =
      'Use {"a":1} or {not json} or {} or [1, 2] or [] or [{"a":1}] or - [ ] item or [a link](u) or ' +
      '{"type":"other","name":"x","input":{}} or {"a": tru} or {"a":\n"b"}';
    expect(runEverySplit(input)).toEqual({ events: [text(input)], fullText: input });
  });

  it('reports a tool_use object without a name or object input, and goes on', () => {
    const input =
      '{"type":"tool_use","input":{}} {"type":"tool_use","name":"n","input":"a.txt"} ' +
      '[{"type":"tool_use","name":"ok","input":{}},{"type":"tool_use","name":7,"input":{}}]';
    expect(runEverySplit(input).events).toEqual([
      error('JSON tool_use object without a string "name"'),
      text(' '),
      error('JSON tool_use "n" without an object "input"'),
      text(' '),
      call('textcall_1', 'ok', {}),
      error('JSON tool_use object without a string "name"'),
    ]);
  });

  it('finds a call right where an object that could not be JSON stopped', () => {
    const input = '{"note": "x", {"type":"tool_use","name":"n","input":{}}}';
    expect(runEverySplit(input).events).toEqual([
      text('{"note": "x", '),
      call('textcall_1', 'n', {}),
      text('}'),
    ]);
  });

  it('holds back an unclosed object only while it could still be JSON', () => {
    const parser = new TextToolParser();
    expect(parser.feed('x {"a"')).toEqual([text('x ')]);
    expect(parser.feed(': 1} y {')).toEqual([text('{"a": 1} y ')]);
    expect(parser.feed('n')).toEqual([text('{n')]);
    expect(parser.feed(' [')).toEqual([text(' ')]);
    expect(parser.feed('{"b"')).toEqual([]);
    expect(parser.end()).toEqual([text('[{"b"')]);
    expect(parser.fullText()).toBe('x {"a": 1} y {n [{"b"');
  });

  it('reports an unterminated JSON call at the end instead of emitting it', () => {
    expect(runEverySplit('a {"type": "tool_use", "name": "x", "input": {"p"')).toEqual({
      events: [text('a '), error('unterminated JSON tool call at end of stream')],
      fullText: 'a ',
    });
  });
});

describe('legacy <invoke> calls', () => {
  it('maps parameters to input, parsing JSON values, at every chunk boundary', () => {
    const input =
      'Sure.<function_calls>\n<invoke name="rye_search"><parameter name="query">a b</parameter>' +
      '<parameter name="limit">5</parameter>\n<parameter name="opts">{"deep":true}</parameter></invoke>\n' +
      '</function_calls>Then.';
    expect(runEverySplit(input)).toEqual({
      events: [
        text('Sure.\n'),
        call('textcall_1', 'rye_search', { query: 'a b', limit: 5, opts: { deep: true } }),
        text('\nThen.'),
      ],
      fullText: 'Sure.\n\nThen.',
    });
  });

  it('reports an invoke without a name, and numbers ids together with other forms', () => {
    const input =
      '<invoke><parameter name="k">v</parameter></invoke><invoke name="a"></invoke>' +
      '<tool_use name="b">{}</tool_use>';
    expect(runEverySplit(input).events).toEqual([
      error('<invoke> call without a name attribute'),
      call('textcall_1', 'a', {}),
      call('textcall_2', 'b', {}),
    ]);
  });
});

describe('end of stream', () => {
  it('reports an unterminated tag call and drops its markup', () => {
    expect(runEverySplit('before <tool_use name="x">{"a":1}</tool_')).toEqual({
      events: [text('before '), error('unterminated <tool_use> call at end of stream')],
      fullText: 'before ',
    });
    expect(run(['<invoke name="x">']).events).toEqual([error('unterminated <invoke> call at end of stream')]);
  });
});

describe('mixed forms', () => {
  it('parses every form in one stream with a malformed call among them', () => {
    const input =
      'A <tool_use id="t1" name="one">{"x":"</tool"}</tool_use> B ' +
      '<tool_use name="bad">nope</tool_use> C {"type":"tool_use","id":"t2","name":"two","input":{}} D ' +
      '<invoke name="three"><parameter name="p">"q"</parameter></invoke> E';
    expect(runEverySplit(input)).toEqual({
      events: [
        text('A '),
        call('t1', 'one', { x: '</tool' }),
        text(' B '),
        error(/^<tool_use name="bad"> body is not a JSON object/),
        text(' C '),
        call('t2', 'two', {}),
        text(' D '),
        call('textcall_1', 'three', { p: 'q' }),
        text(' E'),
      ],
      fullText: 'A  B  C  D  E',
    });
  });
});

describe('limits', () => {
  const limits = { toolParseBufferMax: 60 };
  const overflow = error('tool call over tool_parse_buffer_max (60 characters): discarded');

  it('drops a call over tool_parse_buffer_max with one error and resumes after it', () => {
    const big = 'x'.repeat(80);
    const input =
      `a<tool_use name="big">{"s":"${big}"}</tool_use>b{"type":"tool_use","name":"j","input":{"s":"${big}"}}c` +
      '<tool_use name="ok">{}</tool_use>d';
    expect(runEverySplit(input, limits)).toEqual({
      events: [text('a'), overflow, text('b'), overflow, text('c'), call('textcall_1', 'ok', {}), text('d')],
      fullText: 'abcd',
    });
  });

  it('keeps a call exactly at the limit', () => {
    const input = '<tool_use name="n">{"s":"' + 'x'.repeat(60 - 38) + '"}</tool_use>';
    expect(input).toHaveLength(60);
    expect(run([input], limits).events).toEqual([call('textcall_1', 'n', { s: 'x'.repeat(22) })]);
    expect(run([input.replace('xx', 'xxx')], limits).events).toEqual([overflow]);
  });

  it('skips a call that never closes without keeping it, reporting it once', () => {
    const parser = new TextToolParser(limits);
    const events = [...parser.feed('hi <tool_use name="x">{"a":"')];
    const chunk = 'y'.repeat(10_000);
    for (let i = 0; i < 1_000; i++) events.push(...parser.feed(chunk));
    events.push(...parser.feed('"}</tool_use> after <tool_use name="z">{}</tool_use>'));
    events.push(...parser.feed(' <tool_use name="w">{"a":"' + chunk));
    events.push(...parser.end());
    expect(normalize(events)).toEqual([
      text('hi '),
      overflow,
      text(' after '),
      call('textcall_1', 'z', {}),
      text(' '),
      overflow,
    ]);
    expect(parser.fullText()).toBe('hi  after  ');
  });

  it('stops fullText at text_buffer_max with one error but keeps emitting text and parsing calls', () => {
    const input =
      'abcdefgh<tool_use name="a">{}</tool_use>ijklmnop{"type":"tool_use","name":"b","input":{}}qr';
    expect(runEverySplit(input, { textBufferMax: 10 })).toEqual({
      events: [
        text('abcdefgh'),
        call('textcall_1', 'a', {}),
        text('ij'),
        error('text over text_buffer_max (10 characters): fullText() stops there'),
        text('klmnop'),
        call('textcall_2', 'b', {}),
        text('qr'),
      ],
      fullText: 'abcdefghij',
    });
  });
});

describe('performance', () => {
  it('parses a 1 MB stream fed one character at a time in linear time', () => {
    const unit =
      'Some prose, a < b, {braces}, [a link](x), - [ ] todo and <toolbox> tags.\n' +
      '<tool_use id="t" name="n">{"k":"v}"}</tool_use> {"type":"tool_use","name":"j","input":{"s":"{"}} ' +
      '<invoke name="i"><parameter name="p">1</parameter></invoke>\n';
    const bigCall = `<tool_use name="big">{"content":"${'z'.repeat(300_000)}"}</tool_use>`;
    const prose = unit.repeat(Math.ceil(360_000 / unit.length));
    const input = prose + bigCall + prose;
    expect(input.length).toBeGreaterThan(1_000_000);

    const parser = new TextToolParser();
    const events: TextParserEvent[] = [];
    // CPU time, which other processes' load does not add to (wall time drifted under load).
    const before = process.cpuUsage();
    for (let i = 0; i < input.length; i++) events.push(...parser.feed(input.charAt(i)));
    events.push(...parser.end());
    const used = process.cpuUsage(before);
    const elapsed = (used.user + used.system) / 1000;

    const whole = run([input]);
    expect(normalize(events)).toEqual(whole.events);
    expect(parser.fullText()).toBe(whole.fullText);
    const calls = events.filter((event) => event.type === 'tool_complete');
    const units = (prose.length / unit.length) * 2;
    expect(calls).toHaveLength(units * 3 + 1);
    expect(events.some((event) => event.type === 'error')).toBe(false);
    expect(elapsed).toBeLessThan(2_000);
  });
});

describe('prose after an open brace', () => {
  it('is given back as text when it grows past the call buffer without looking like a call', () => {
    const parser = new TextToolParser({ toolParseBufferMax: 1024 });
    const prose = `Here: {"${'the answer goes on and on. '.repeat(200)}`;
    const events = [...parser.feed(prose.slice(0, 3000)), ...parser.feed(prose.slice(3000)), ...parser.end()];
    expect(parser.fullText()).toBe(prose);
    expect(events.some((event) => event.type === 'error')).toBe(false);
    // Something that does look like a call over the buffer is still discarded, with an error.
    const call = new TextToolParser({ toolParseBufferMax: 1024 });
    const big = `{"type": "tool_use", "name": "x", "input": {"v": "${'y'.repeat(3000)}"}}`;
    const out = [...call.feed(big), ...call.end()];
    expect(out.filter((event) => event.type === 'error')).toHaveLength(1);
    expect(call.fullText()).toBe('');
  });
});

describe('unreadable calls say what was written (issue 28 point 14)', () => {
  const unreadOf = (input: string, limits?: Partial<TextParserLimits>) =>
    runEverySplit(input, limits).events.flatMap((event) => (event.type === 'error' ? [event.call] : []));

  it('bad JSON, a non-object input, no name, an unterminated call and an overflow each carry the call', () => {
    expect(unreadOf('<tool_use id="a" name="read">{"path": x}</tool_use>')).toEqual([
      { name: 'read', excerpt: '<tool_use id="a" name="read">{"path": x}</tool_use>' },
    ]);
    expect(unreadOf('<tool_use name="read">[1]</tool_use>')).toEqual([
      { name: 'read', excerpt: '<tool_use name="read">[1]</tool_use>' },
    ]);
    expect(unreadOf('<tool_use id="a">{}</tool_use>')).toEqual([
      { excerpt: '<tool_use id="a">{}</tool_use>' },
    ]);
    expect(unreadOf('<tool_use name="read">{"path"')).toEqual([
      { name: 'read', excerpt: '<tool_use name="read">{"path"' },
    ]);
    expect(unreadOf('{"type":"tool_use","name":"j","input":[1]}')).toEqual([
      { name: 'j', excerpt: '{"type":"tool_use","name":"j","input":[1]}' },
    ]);
    const big = 'x'.repeat(80);
    const [overflow] = unreadOf(`<tool_use name="big">{"s":"${big}"}</tool_use>`, { toolParseBufferMax: 60 });
    expect(overflow).toEqual({ name: 'big', excerpt: `<tool_use name="big">{"s":"${big}`.slice(0, 60) });
  });

  it('text over text_buffer_max is not a call', () => {
    expect(unreadOf('x'.repeat(20), { textBufferMax: 10 })).toEqual([undefined]);
  });
});
