/**
 * `__parallel_safe__` (Python/JS) and `parallel_safe` (YAML): a tool's declaration that its
 * calls may run side by side. Absent means one after another, as every older tool behaves; a
 * value that is not a boolean is refused like any malformed field, naming file, line and field.
 */

import { RyeError } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { parseToolMetadata } from '../src/metadata.js';

const JS = `export const __version__ = '1.0.0';\nexport const __executor_id__ = 'rye/core/runtimes/node/function';\n`;
const PY = `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/function"\n`;

describe('parallel_safe tool metadata', () => {
  it('reads the mark in JavaScript, Python and YAML', () => {
    expect(
      parseToolMetadata(`${JS}export const __parallel_safe__ = true;\n`, '/t.js', 'javascript/javascript'),
    ).toMatchObject({ parallelSafe: true });
    expect(parseToolMetadata(`${PY}__parallel_safe__ = True\n`, '/t.py', 'python/ast')).toMatchObject({
      parallelSafe: true,
    });
    expect(
      parseToolMetadata('version: "1.0.0"\nparallel_safe: true\n', '/t.yaml', 'yaml/yaml'),
    ).toMatchObject({
      parallelSafe: true,
    });
    expect(parseToolMetadata(`${PY}__parallel_safe__ = False\n`, '/t.py', 'python/ast').parallelSafe).toBe(
      false,
    );
  });

  it('an older tool without the mark parses as before: not parallel-safe', () => {
    const metadata = parseToolMetadata(JS, '/t.js', 'javascript/javascript');
    expect(metadata.parallelSafe).toBeUndefined();
    expect(metadata.executorId).toBe('rye/core/runtimes/node/function');
  });

  it('a mark that is not a boolean is a clear VALIDATION error with the line', () => {
    let error: unknown;
    try {
      parseToolMetadata(`${PY}__parallel_safe__ = "yes"\n`, '/t.py', 'python/ast');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RyeError);
    expect(error).toMatchObject({ code: 'VALIDATION', details: { field: '__parallel_safe__', line: 3 } });
    expect((error as RyeError).message).toContain('expected true or false');
    expect((error as RyeError).hint).toMatch(/re-sign/);
  });
});
