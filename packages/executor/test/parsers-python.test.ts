import { describe, expect, it } from 'vitest';
import { parsePythonMetadata } from '../src/parsers/python.js';
import { MalformedMetadataError } from '../src/parsers/types.js';

const P = '/x/tool.py';
const fields = (src: string) => parsePythonMetadata(src, P).fields;
const lit = (literal: string) => fields(`X = ${literal}\n`)['X'];

function malformed(src: string): MalformedMetadataError {
  try {
    parsePythonMetadata(src, P);
  } catch (e) {
    expect(e).toBeInstanceOf(MalformedMetadataError);
    return e as MalformedMetadataError;
  }
  throw new Error('expected MalformedMetadataError');
}

describe('parsePythonMetadata', () => {
  it('reads the spec example', () => {
    const src = [
      '# rye:signed:2026-05-01T09:00:00Z:<hash>:<sig>:<fp>',
      '"""Count words in a text file."""',
      '__version__ = "1.2.0"',
      '__tool_type__ = "python"',
      '__executor_id__ = "rye/core/runtimes/python/function"',
      '__category__ = "acme/text"',
      '__tool_description__ = ("Count words " "in a file")',
      'CONFIG_SCHEMA = {"type": "object",',
      '                 "properties": {"path": {"type": "string"}},',
      '                 "required": ["path"]}',
      '',
      'def execute(params, project_path):',
      '    text = open(params["path"]).read()',
      '    return {"success": True, "words": len(text.split())}',
      '',
    ].join('\n');
    expect(parsePythonMetadata(src, P)).toEqual({
      fields: {
        __version__: '1.2.0',
        __tool_type__: 'python',
        __executor_id__: 'rye/core/runtimes/python/function',
        __category__: 'acme/text',
        __tool_description__: 'Count words in a file',
        CONFIG_SCHEMA: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
      lines: {
        __version__: 3,
        __tool_type__: 4,
        __executor_id__: 5,
        __category__: 6,
        __tool_description__: 7,
        CONFIG_SCHEMA: 8,
      },
      docstring: 'Count words in a text file.',
    });
  });

  it('reads every kind of string literal', () => {
    expect(lit(`'single'`)).toBe('single');
    expect(lit(`"double"`)).toBe('double');
    expect(lit(`'''triple\nsingle'''`)).toBe('triple\nsingle');
    expect(lit(`"""triple "quoted" \\""""`)).toBe('triple "quoted" "');
    expect(lit(`""`)).toBe('');
    expect(lit(`u"unicode"`)).toBe('unicode');
    expect(lit(`U'unicode'`)).toBe('unicode');
    expect(lit(`b"bytes"`)).toBe('bytes');
    expect(lit(`Rb"\\d+"`)).toBe('\\d+');
    expect(lit(`bR'\\n'`)).toBe('\\n');
    expect(lit(`r"C:\\new\\table"`)).toBe('C:\\new\\table');
    expect(lit(`r'\\''`)).toBe("\\'");
    expect(lit(`R"""raw\\ntriple"""`)).toBe('raw\\ntriple');
  });

  it('decodes escape sequences', () => {
    expect(lit(`"a\\nb\\tc\\\\d\\'e\\"f"`)).toBe('a\nb\tc\\d\'e"f');
    expect(lit(`"\\x41\\u00e9\\U0001F600"`)).toBe('Aé😀');
    expect(lit(`"\\101\\0\\7"`)).toBe('A\0\x07');
    expect(lit(`"\\a\\b\\f\\r\\v"`)).toBe('\x07\b\f\r\v');
    expect(lit(`"keep \\d \\N{DASH}"`)).toBe('keep \\d \\N{DASH}');
    expect(lit(`"line \\\ncontinued"`)).toBe('line continued');
    expect(lit(`b"\\u00e9"`)).toBe('\\u00e9');
  });

  it('reads numbers, booleans and None', () => {
    expect(lit('42')).toBe(42);
    expect(lit('1_000_000')).toBe(1000000);
    expect(lit('0x1F')).toBe(31);
    expect(lit('0o17')).toBe(15);
    expect(lit('0b101')).toBe(5);
    expect(lit('0XfF')).toBe(255);
    expect(lit('3.25')).toBe(3.25);
    expect(lit('.5')).toBe(0.5);
    expect(lit('5.')).toBe(5);
    expect(lit('1e3')).toBe(1000);
    expect(lit('1.5E-3')).toBe(0.0015);
    expect(lit('-7')).toBe(-7);
    expect(lit('- 2.5')).toBe(-2.5);
    expect(lit('+3')).toBe(3);
    expect(lit('0')).toBe(0);
    expect(lit('True')).toBe(true);
    expect(lit('False')).toBe(false);
    expect(lit('None')).toBe(null);
  });

  it('reads lists, tuples, dicts and sets, nested, with trailing commas and comments', () => {
    expect(lit('[1, "a", None, [True, (2, 3)],]')).toEqual([1, 'a', null, [true, [2, 3]]]);
    expect(lit('()')).toEqual([]);
    expect(lit('(1,)')).toEqual([1]);
    expect(lit('1, 2')).toEqual([1, 2]);
    expect(lit('("just one")')).toBe('just one');
    expect(lit('{}')).toEqual({});
    expect(lit('{1, 2, "three"}')).toEqual([1, 2, 'three']);
    expect(lit('{1: "one", 2.5: "x", -3: "neg", "k": {"n": [1, {"deep": ()}]}}')).toEqual({
      '1': 'one',
      '2.5': 'x',
      '-3': 'neg',
      k: { n: [1, { deep: [] }] },
    });
    const src = [
      'CONFIG = {  # a comment',
      '    "command": "${RYE_PYTHON}",  # another, with = and "quotes"',
      '',
      '    "args": [',
      '        "{tool_path}",',
      '        "--params", "{params_json}",',
      '    ],',
      '    "timeout": 300,',
      '    "nested": {"a": {"b": {"c": [1, 2, 3]}}},',
      '}',
    ].join('\n');
    expect(fields(src)).toEqual({
      CONFIG: {
        command: '${RYE_PYTHON}',
        args: ['{tool_path}', '--params', '{params_json}'],
        timeout: 300,
        nested: { a: { b: { c: [1, 2, 3] } } },
      },
    });
  });

  it('keeps a __proto__ key as plain data', () => {
    const value = lit('{"__proto__": {"polluted": True}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('concatenates adjacent strings, also across lines in brackets and after a backslash', () => {
    expect(lit(`"a" 'b' """c"""`)).toBe('abc');
    expect(lit(`("first "\n    "second "  # comment\n    r"\\third")`)).toBe('first second \\third');
    expect(fields(`X = "one " \\\n    "two"\nY = 1\n`)).toEqual({ X: 'one two', Y: 1 });
    expect(parsePythonMetadata(`X = "one " \\\n    "two"\nY = 1\n`, P).lines).toEqual({ X: 1, Y: 3 });
  });

  it('ignores =, # and fake assignments inside triple-quoted strings', () => {
    const src = [
      '"""Module doc.',
      '',
      '__version__ = "9.9.9"',
      '# not a comment',
      '"""',
      '__version__ = "1.0.0"',
      "HELP = '''",
      'CONFIG = {"fake": True}',
      "__tool_type__ = 'fake'  # '''",
      'NOTE = "a # not a comment"  # but this is',
      'def f():',
      '    s = """',
      '__category__ = "fake"',
      '"""',
      '    return s',
    ].join('\n');
    const parsed = parsePythonMetadata(src, P);
    expect(parsed.fields).toEqual({
      __version__: '1.0.0',
      HELP: '\nCONFIG = {"fake": True}\n__tool_type__ = \'fake\'  # ',
      NOTE: 'a # not a comment',
    });
    expect(parsed.lines).toEqual({ __version__: 6, HELP: 7, NOTE: 10 });
    expect(parsed.docstring).toBe('Module doc.\n\n__version__ = "9.9.9"\n# not a comment');
  });

  it('lets the last assignment win', () => {
    const parsed = parsePythonMetadata('__version__ = "1.0.0"\nX = 1\n__version__ = "2.0.0"\n', P);
    expect(parsed.fields['__version__']).toBe('2.0.0');
    expect(parsed.lines['__version__']).toBe(3);
  });

  it('ignores indented, annotated, multi-target and augmented assignments', () => {
    const src = [
      'import os',
      'X: int = 1',
      'a = b = 2',
      'c, d = 3, 4',
      'e += 5',
      'f.g = 6',
      'h[0] = 7',
      'i == 8',
      'if True:',
      '    __version__ = "indented"',
      'class Tool:',
      '    CONFIG = {"in": "class"}',
      '    def m(self):',
      '        __category__ = "in method"',
      'def execute():',
      '    X2 = 9',
      '    return X2',
      'if os: Y = 10',
      'for _ in []: Z = 11; W = 12',
      'ok = 13; also = 14',
    ].join('\n');
    expect(fields(src)).toEqual({ ok: 13, also: 14 });
  });

  it('skips other top-level statements and blocks with brackets and strings spanning lines', () => {
    const src = [
      '#!/usr/bin/env python3',
      '# rye:signed:2026-05-01T09:00:00Z:abc:def:fp',
      'from x import (',
      '    a,  # __version__ = "no"',
      '    b,',
      ')',
      '@decorator(name="__version__ = \'no\'")',
      'def f(x=[',
      '1]):',
      "    '''",
      '__version__ = "still no"',
      "'''",
      '    return {',
      '__category__: 1',
      '}',
      '__version__ = "yes"',
    ].join('\n');
    const parsed = parsePythonMetadata(src, P);
    expect(parsed.fields).toEqual({ __version__: 'yes' });
    expect(parsed.lines).toEqual({ __version__: 16 });
    expect(parsed.docstring).toBeUndefined();
  });

  it('reads the module docstring only from the first statement', () => {
    expect(parsePythonMetadata('#!/usr/bin/env python\n\n"""  Doc.  """\nX = 1\n', P).docstring).toBe('Doc.');
    expect(parsePythonMetadata("r'''Raw \\n doc'''\n", P).docstring).toBe('Raw \\n doc');
    expect(parsePythonMetadata('("Paren" "thesised")\n', P).docstring).toBe('Parenthesised');
    expect(parsePythonMetadata('import os\n"""Not a docstring."""\n', P).docstring).toBeUndefined();
    expect(parsePythonMetadata('b"""Bytes."""\n', P).docstring).toBeUndefined();
    expect(parsePythonMetadata('f"""F {x}."""\n', P).docstring).toBeUndefined();
    expect(parsePythonMetadata('"a" + "b"\n', P).docstring).toBeUndefined();
  });

  it('ignores non-literal values of other names', () => {
    const src = [
      'import os',
      'PATH = os.path.join("a", "b")',
      'NAME = f"{PATH}"',
      'SUM = "a" + "b"',
      'SQUARES = [x * x for x in range(3)]',
      'FN = lambda x=1: x',
      'REF = PATH',
      'COND = 1 if PATH else 2',
      'CPLX = 1j',
      'KEEP = "kept"',
    ].join('\n');
    expect(fields(src)).toEqual({ KEEP: 'kept' });
  });

  it('rejects a non-literal known field, naming its line', () => {
    const e = malformed('"""Doc."""\nimport os\n\n__version__ = get_version()\n');
    expect(e.message).toBe(
      'Malformed metadata in /x/tool.py:4: __version__: expected a literal value (string, number, list, dict, True/False/None), got a function call',
    );
    expect(e.code).toBe('VALIDATION');
    expect(e.hint).toBe('Make the field a plain literal, then sign the tool again.');
    expect([e.path, e.line, e.field]).toEqual(['/x/tool.py', 4, '__version__']);
    expect(e.details).toMatchObject({ path: '/x/tool.py', line: 4, field: '__version__' });

    const cases: [string, string][] = [
      ['__category__ = BASE', 'a name (`BASE`)'],
      ['__category__ = os.sep', 'an attribute access'],
      ['__category__ = f"acme/{x}"', 'an f-string'],
      ['__category__ = "acme" + "/text"', 'a binary operation (`+`)'],
      ['__category__ = "/".join(["a", "b"])', 'an attribute access'],
      ['CONFIG_SCHEMA = {"type": TYPE}', 'a name (`TYPE`)'],
      ['CONFIG_SCHEMA = {k: 1 for k in "ab"}', 'a name (`k`)'],
      ['CONFIG_RESOLVE = [x for x in y]', 'a comprehension'],
      ['CONFIG = {**BASE}', 'a dict unpacking'],
      ['CONFIG = lambda: 1', 'a lambda'],
      ['CONFIG = dict(a=1)', 'a function call'],
    ];
    for (const [line, got] of cases) {
      const err = malformed(`X = 1\n${line}\n`);
      expect(err.line, line).toBe(2);
      expect(err.expected, line).toBe(
        `expected a literal value (string, number, list, dict, True/False/None), got ${got}`,
      );
    }
  });

  it('reports the line where a multi-line known field starts', () => {
    const e = malformed('X = 1\n\nCONFIG_SCHEMA = {\n    "type": "object",\n    "properties": PROPS,\n}\n');
    expect(e.line).toBe(3);
    expect(e.field).toBe('CONFIG_SCHEMA');
  });

  it('checks the types of known fields', () => {
    expect(malformed('__version__ = 1.2\n').expected).toBe('expected a string, got a number');
    expect(malformed('\n__tool_type__ = None\n').message).toBe(
      'Malformed metadata in /x/tool.py:2: __tool_type__: expected a string, got None',
    );
    expect(malformed('__executor_id__ = ["a"]\n').expected).toBe('expected a string or None, got a list');
    expect(malformed('CONFIG_SCHEMA = ["a"]\n').expected).toBe('expected a dict, got a list');
    expect(malformed('ENV_CONFIG = "x"\n').expected).toBe('expected a dict, got a string');
    expect(malformed('CONFIG_RESOLVE = True\n').expected).toBe('expected a dict or a list, got a boolean');
    expect(fields('__executor_id__ = None\nCONFIG_RESOLVE = [{"a": 1}]\n')).toEqual({
      __executor_id__: null,
      CONFIG_RESOLVE: [{ a: 1 }],
    });
    expect(fields('__name__ = 5\n')).toEqual({ __name__: 5 });
  });

  it('reports syntax problems in a known field', () => {
    const unterminated = malformed('X = 1\n__version__ = "1.0\nY = 2\n');
    expect(unterminated.line).toBe(2);
    expect(unterminated.expected).toMatch(/unterminated string starting on line 2/);

    const unclosed = malformed(
      'CONFIG_SCHEMA = {\n    "type": "object",\n    "properties": {"a": 1},\n\ndef execute():\n    pass\n',
    );
    expect(unclosed.line).toBe(1);
    expect(unclosed.expected).toBe(
      "expected a valid Python literal, got a syntax error: '{' opened on line 1 is never closed",
    );
    expect(malformed('CONFIG = {"a": 1]\n').expected).toMatch(/'\{' on line 1 closed by '\]'/);
    expect(malformed('CONFIG = {"a" 1}\n').expected).toMatch(/unexpected '1'/);
    expect(malformed('__version__ =\n').expected).toMatch(/missing value/);
    expect(malformed('__version__ = """never\nclosed\n').expected).toMatch(/unterminated string/);
  });

  it('does not let syntax problems elsewhere matter', () => {
    const src = [
      'BROKEN = "unterminated',
      'ALSO = {"a": 1',
      'def f(:',
      '    x = (((',
      '__version__ = "1.0.0"',
      'OTHER = 1 +',
      '__category__ = "acme"',
    ].join('\n');
    expect(fields(src)).toEqual({ __version__: '1.0.0', __category__: 'acme' });
  });

  it('handles CRLF line endings, a BOM and a file without a final newline', () => {
    expect(parsePythonMetadata('\ufeff"""Doc."""\r\nX = {\r\n  "a": 1}\r\nY = 2', P)).toEqual({
      fields: { X: { a: 1 }, Y: 2 },
      lines: { X: 2, Y: 4 },
      docstring: 'Doc.',
    });
    expect(parsePythonMetadata('', P)).toEqual({ fields: {}, lines: {} });
  });

  it('skips f-strings with nested quotes in function bodies', () => {
    const src = 'def f(d):\n    return f"{d["#"]} {{literal}}" + (\n        "x")\n__version__ = "1"\n';
    expect(fields(src)).toEqual({ __version__: '1' });
  });

  it('parses a 20 KB tool quickly', () => {
    let src = '"""Doc."""\n__version__ = "1.0.0"\nCONFIG_SCHEMA = {"type": "object", "properties": {}}\n';
    for (let i = 0; src.length < 20_000; i++) {
      src += `\ndef f${i}(params):\n    """Doc = # ${i}."""\n    x = [a for a in params if a != "#"]\n    return {"ok": True, "n": len(x)}\n`;
    }
    for (let i = 0; i < 50; i++) parsePythonMetadata(src, P);
    // CPU time, not wall time: other processes' load does not add to it. A linear parse takes
    // well under a millisecond; one that backtracks over the body takes seconds.
    const before = process.cpuUsage();
    for (let i = 0; i < 100; i++) parsePythonMetadata(src, P);
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000 / 100).toBeLessThan(20);
    expect(fields(src)['__version__']).toBe('1.0.0');
  });
});
