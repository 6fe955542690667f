import { describe, expect, it } from 'vitest';
import { parseJavaScriptMetadata } from '../src/parsers/javascript.js';
import { MalformedMetadataError } from '../src/parsers/types.js';

function malformed(src: string, path = '/x/tool.js'): MalformedMetadataError {
  try {
    parseJavaScriptMetadata(src, path);
  } catch (e) {
    expect(e).toBeInstanceOf(MalformedMetadataError);
    return e as MalformedMetadataError;
  }
  throw new Error('expected MalformedMetadataError');
}

describe('parseJavaScriptMetadata', () => {
  it('reads an ES module tool with a shebang and a signature line', () => {
    const src = [
      '#!/usr/bin/env node',
      '// rye:signed:2026-05-01T09:00:00Z:abc:def:fp',
      "import { readFile } from 'node:fs/promises';",
      '',
      'export const __version__ = "1.0.0";',
      "export const __tool_type__ = 'javascript';",
      'export const __executor_id__ = null;',
      'export const __category__ = `acme/text`;',
      'export const __tool_description__ = "Count words";',
      'export const CONFIG_SCHEMA = {',
      "  type: 'object', // comment",
      '  /* block comment */',
      '  properties: {',
      '    url: { type: \'string\', default: "https://example.com/a//b" },',
      "    'quoted-key': { type: 'number', minimum: -1, maximum: 1e3 },",
      '    42: { enum: [true, false, null] },',
      '  },',
      "  required: ['url',],",
      '};',
      '',
      'export async function execute(params) {',
      '  const __version__ = "inner";',
      '  const CONFIG = { not: "top-level" };',
      '  return { success: true };',
      '}',
      'const text = await readFile(process.argv[2], "utf8");',
    ].join('\n');
    expect(parseJavaScriptMetadata(src, '/x/tool.mjs')).toEqual({
      fields: {
        __version__: '1.0.0',
        __tool_type__: 'javascript',
        __executor_id__: null,
        __category__: 'acme/text',
        __tool_description__: 'Count words',
        CONFIG_SCHEMA: {
          type: 'object',
          properties: {
            url: { type: 'string', default: 'https://example.com/a//b' },
            'quoted-key': { type: 'number', minimum: -1, maximum: 1000 },
            '42': { enum: [true, false, null] },
          },
          required: ['url'],
        },
      },
      lines: {
        __version__: 5,
        __tool_type__: 6,
        __executor_id__: 7,
        __category__: 8,
        __tool_description__: 9,
        CONFIG_SCHEMA: 10,
      },
    });
  });

  it('reads a CommonJS-style script with var and several declarators', () => {
    const src = [
      "'use strict';",
      "const fs = require('fs');",
      'var __version__ = "0.1.0", __tool_type__ = "javascript";',
      "let ENV_CONFIG = { interpreter: { type: 'node', fallback: 'node' } };",
      'let later;',
      'module.exports = { execute() { return 1; } };',
      'if (require.main === module) { return; }',
    ].join('\n');
    const parsed = parseJavaScriptMetadata(src, '/x/tool.cjs');
    expect(parsed.fields).toEqual({
      __version__: '0.1.0',
      __tool_type__: 'javascript',
      ENV_CONFIG: { interpreter: { type: 'node', fallback: 'node' } },
    });
    expect(parsed.lines).toEqual({ __version__: 3, __tool_type__: 3, ENV_CONFIG: 4 });
  });

  it('reads CommonJS exports assignments in a .cjs file like declarations', () => {
    const src = [
      'exports.__version__ = "1.0.0";',
      'module.exports.__executor_id__ = "rye/core/runtimes/node/node";',
      "exports['__category__'] = 'acme';",
      'exports.CONFIG_SCHEMA = { type: "object" };',
      'exports.helper = require("./helper");',
      'exports[name] = "computed: ignored";',
      'exports.__tool_type__ += "x";',
    ].join('\n');
    const parsed = parseJavaScriptMetadata(src, '/x/tool.cjs');
    expect(parsed.fields).toEqual({
      __version__: '1.0.0',
      __executor_id__: 'rye/core/runtimes/node/node',
      __category__: 'acme',
      CONFIG_SCHEMA: { type: 'object' },
    });
    expect(parsed.lines).toMatchObject({ __version__: 1, __executor_id__: 2, __category__: 3 });
  });

  it('refuses CommonJS metadata in a file that runs as an ES module, saying why', () => {
    const error = malformed(
      'const x = 1;\nexports.__executor_id__ = "rye/core/runtimes/node/node";\n',
      '/x/tool.js',
    );
    expect(error.line).toBe(2);
    expect(error.field).toBe('__executor_id__');
    expect(error.message).toContain('runs as an ES module, where `exports` is not defined');
    expect(error.hint).toContain('export const __executor_id__ = …');
    expect(error.hint).toContain('.cjs');
    // Other names on `exports` in such a file are not metadata: no refusal.
    expect(parseJavaScriptMetadata('exports.helper = 1;\n', '/x/lib.js').fields).toEqual({ helper: 1 });
  });

  it('reads TypeScript with types, interfaces, as const and satisfies around', () => {
    const src = [
      "import type { Schema } from './types.js';",
      'interface Params { path: string }',
      'type SomeType = Record<string, unknown>;',
      'export const __version__: string = "2.0.0";',
      'const CONFIG_SCHEMA: SomeType = {',
      "  type: 'object',",
      "  properties: { a: { type: 'string' }, },",
      '};',
      "export const CONFIG = { command: 'node', args: ['{tool_path}'] } as const;",
      'export const CONFIG_RESOLVE: Record<string, unknown>[] = [{ a: 1 }] satisfies object[];',
      "const __category__ = <string>'acme/ts';",
      'export default function execute(params: Params): { ok: boolean } { return { ok: !!params }; }',
    ].join('\n');
    const parsed = parseJavaScriptMetadata(src, '/x/tool.ts');
    expect(parsed.fields).toEqual({
      __version__: '2.0.0',
      CONFIG_SCHEMA: { type: 'object', properties: { a: { type: 'string' } } },
      CONFIG: { command: 'node', args: ['{tool_path}'] },
      CONFIG_RESOLVE: [{ a: 1 }],
      __category__: 'acme/ts',
    });
    expect(parsed.lines['CONFIG_SCHEMA']).toBe(5);
  });

  it('ignores non-literal values of other names and nested declarations', () => {
    const src = [
      'const root = process.cwd();',
      'const url = `https://${root}`;',
      'const list = [...[1]];',
      'const fn = () => 1;',
      'const { a, b } = { a: 1, b: 2 };',
      'const n = -5;',
      'function f() { var __version__ = x; }',
      '{ const CONFIG = y; }',
    ].join('\n');
    expect(parseJavaScriptMetadata(src, '/x/tool.js').fields).toEqual({ n: -5 });
  });

  it('lets the last declaration win', () => {
    const parsed = parseJavaScriptMetadata('var __version__ = "1";\nvar __version__ = "2";\n', '/x/t.js');
    expect(parsed.fields['__version__']).toBe('2');
    expect(parsed.lines['__version__']).toBe(2);
  });

  it('rejects a non-literal known field, naming its line', () => {
    const e = malformed('const a = 1;\n\nexport const __version__ = getVersion();\n');
    expect(e.message).toBe(
      'Malformed metadata in /x/tool.js:3: __version__: expected a literal value (string, number, boolean, null, array, object), got a function call',
    );
    expect(e.code).toBe('VALIDATION');
    const cases: [string, string][] = [
      ['const __category__ = BASE;', 'a name (`BASE`)'],
      ['const __category__ = `acme/${x}`;', 'a template literal with expressions'],
      ["const __category__ = 'a' + 'b';", 'a binary expression'],
      ['const CONFIG = { ...BASE };', 'a spread'],
      ['const CONFIG = { [k]: 1 };', 'a computed key'],
      ['const CONFIG = { run() {} };', 'a method'],
      ['const CONFIG = { timeout };', 'a shorthand property (`timeout`)'],
      ['const CONFIG_SCHEMA = { type: Types.object };', 'a property access'],
      ['const CONFIG_RESOLVE = [1, , 2];', 'an array with holes'],
      ['const ENV_CONFIG = new Map();', 'a constructor call'],
    ];
    for (const [line, got] of cases) {
      const err = malformed(`// header\n${line}\n`);
      expect(err.line, line).toBe(2);
      expect(err.expected, line).toBe(
        `expected a literal value (string, number, boolean, null, array, object), got ${got}`,
      );
    }
  });

  it('checks the types of known fields', () => {
    expect(malformed('const __version__ = 1;').expected).toBe('expected a string, got a number');
    expect(malformed('const __executor_id__ = false;').expected).toBe(
      'expected a string or null, got a boolean',
    );
    expect(malformed('const CONFIG_SCHEMA = [];').expected).toBe('expected an object, got an array');
  });

  it('reports a file that does not parse, with the line', () => {
    const e = malformed('const a = 1;\nconst b = {\n  c: 1,,\n};\n');
    expect(e.field).toBe('(file)');
    expect(e.line).toBe(3);
    expect(e.expected).toMatch(/^valid JavaScript\/TypeScript: /);
    expect(e.expected).not.toMatch(/\(\d+:\d+\)$/);
    // TypeScript syntax is only accepted in TypeScript files.
    expect(malformed('const x: string = "a";\n', '/x/tool.js').field).toBe('(file)');
  });

  it('loads @babel/parser lazily and reuses it', () => {
    for (let i = 0; i < 3; i++) {
      expect(parseJavaScriptMetadata('export const __version__ = "1.0.0";', '/x/t.mjs').fields).toEqual({
        __version__: '1.0.0',
      });
    }
  });
});
