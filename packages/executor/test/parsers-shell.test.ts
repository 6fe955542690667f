import { describe, expect, it } from 'vitest';
import { parseShellMetadata } from '../src/parsers/shell.js';
import { MalformedMetadataError } from '../src/parsers/types.js';

const P = '/x/tool.sh';

function malformed(src: string): MalformedMetadataError {
  try {
    parseShellMetadata(src, P);
  } catch (e) {
    expect(e).toBeInstanceOf(MalformedMetadataError);
    return e as MalformedMetadataError;
  }
  throw new Error('expected MalformedMetadataError');
}

describe('parseShellMetadata', () => {
  it('reads the comment header after a shebang and a signature line', () => {
    const src = [
      '#!/usr/bin/env bash',
      '# rye:signed:2026-05-01T09:00:00Z:abc:sig==:fp',
      '# Count words in a file.',
      '# __version__ = "1.0.0"',
      "# __tool_type__ = 'shell'",
      '#__executor_id__="rye/core/runtimes/bash"',
      '',
      '# __category__ = "acme/text"   ',
      '# __tool_description__ = "a=b, c = \\"d\\""',
      '# __author__ = "someone"',
      '# NOTE = this is ignored',
      '# CONFIG_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}',
      '# ENV_CONFIG = {"env": {"LANG": "C"}}',
      'set -euo pipefail',
      '# __version__ = "9.9.9"',
      'wc -w "$1"',
    ].join('\n');
    expect(parseShellMetadata(src, P)).toEqual({
      fields: {
        __version__: '1.0.0',
        __tool_type__: 'shell',
        __executor_id__: 'rye/core/runtimes/bash',
        __category__: 'acme/text',
        __tool_description__: 'a=b, c = "d"',
        __author__: 'someone',
        CONFIG_SCHEMA: { type: 'object', properties: { path: { type: 'string' } } },
        ENV_CONFIG: { env: { LANG: 'C' } },
      },
      lines: {
        __version__: 4,
        __tool_type__: 5,
        __executor_id__: 6,
        __category__: 8,
        __tool_description__: 9,
        __author__: 10,
        CONFIG_SCHEMA: 12,
        ENV_CONFIG: 13,
      },
    });
  });

  it('reads null and None, CRLF lines and a header without shebang', () => {
    const parsed = parseShellMetadata('# __executor_id__ = null\r\n# __other__ = None\r\necho hi\r\n', P);
    expect(parsed.fields).toEqual({ __executor_id__: null, __other__: null });
    expect(parseShellMetadata('# __executor_id__ = None\n', P).fields).toEqual({ __executor_id__: null });
    expect(() => parseShellMetadata('# __category__ = None\n', P)).toThrow(MalformedMetadataError);
  });

  it('stops at the first command', () => {
    const parsed = parseShellMetadata('#!/bin/sh\necho start\n# __version__ = "1.0.0"\n', P);
    expect(parsed).toEqual({ fields: {}, lines: {} });
  });

  it('rejects a malformed value of a known field, naming its line', () => {
    const e = malformed('#!/bin/sh\n# __version__ = 1.0.0\n');
    expect(e.message).toBe(
      'Malformed metadata in /x/tool.sh:2: __version__: expected a quoted string or null, got `1.0.0`',
    );
    expect(e.code).toBe('VALIDATION');
    expect(malformed('# __category__ = "a"b"\n').line).toBe(1);
    expect(malformed('# __category__ = "unterminated\n').field).toBe('__category__');
    expect(malformed('#\n# CONFIG_SCHEMA = {"type": \n').expected).toMatch(
      /^expected a single-line JSON object/,
    );
    expect(malformed('# CONFIG = ["a"]\n').expected).toBe('expected an object, got an array');
    // Unknown names with odd values are ignored.
    expect(parseShellMetadata('# __author__ = someone\n', P).fields).toEqual({});
  });
});
