import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  knowledgeTranscriptPath,
  threadDir,
  threadIdProblem,
  threadsStateRoot,
} from '../src/persistence/paths.js';

const ROOT = resolve('/work/project/.ai/state/threads');

describe('thread paths', () => {
  it('nests a thread id under the state root', () => {
    expect(threadsStateRoot('/work/project')).toBe(ROOT);
    expect(threadDir(ROOT, 'acme/build/build-1739820456123')).toBe(
      join(ROOT, 'acme', 'build', 'build-1739820456123'),
    );
    expect(threadDir(ROOT, '0f8fad5b-d9cb-469f-a165-70867728950e')).toBe(
      join(ROOT, '0f8fad5b-d9cb-469f-a165-70867728950e'),
    );
    expect(knowledgeTranscriptPath('/work/project/.ai', 'acme/build/build-1')).toBe(
      resolve('/work/project/.ai/knowledge/agent/threads/acme/build/build-1.md'),
    );
    // Dots inside a name are fine; only whole '.'/'..' segments are not.
    expect(threadDir(ROOT, 'a.b/..c/c..-1')).toBe(join(ROOT, 'a.b', '..c', 'c..-1'));
  });

  it('threadDir only checks: it makes no folder (ensureThreadDir does)', async () => {
    const { ensureThreadDir } = await import('../src/persistence/paths.js');
    const project = mkdtempSync(join(tmpdir(), 'rye-paths-'));
    try {
      const root = threadsStateRoot(project);
      const dir = threadDir(root, 'acme/build/build-1');
      expect(existsSync(join(project, '.ai'))).toBe(false);
      expect(ensureThreadDir(root, 'acme/build/build-1')).toBe(dir);
      expect(existsSync(dir)).toBe(true);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  const hostile: Array<[string, RegExp]> = [
    ['', /empty/],
    ['..', /'\.\.' segment/],
    ['../x', /'\.\.' segment/],
    ['a/../../x', /'\.\.' segment/],
    ['a/../b', /'\.\.' segment/],
    ['a/./b', /'\.' segment/],
    ['a/..', /'\.\.' segment/],
    ['/etc/passwd', /absolute/],
    ['/', /absolute/],
    ['C:/Windows/x', /absolute/],
    ['c:x', /absolute/],
    ['a//b', /empty segment/],
    ['a/b/', /empty segment/],
    ['a\\..\\..\\x', /backslash/],
    ['a\\b', /backslash/],
    ['a/b\u0000c', /control character/],
    ['a/b\nc', /control character/],
  ];

  it.each(hostile)('refuses %j', (id, reason) => {
    expect(threadIdProblem(id)).toMatch(reason);
    for (const build of [() => threadDir(ROOT, id), () => knowledgeTranscriptPath('/p/.ai', id)]) {
      expect(build).toThrow(
        expect.objectContaining({
          code: 'PERMISSION',
          message: expect.stringMatching(/^Refusing thread id/),
        }),
      );
    }
  });

  it('refuses a hostile directive id inside a well-formed thread id', () => {
    // makeThreadId('../../../home/u/.ssh', …) → '../../../home/u/.ssh/.ssh-1'
    expect(() => threadDir(ROOT, '../../../home/u/.ssh/.ssh-1')).toThrow(/'\.\.' segment/);
  });

  it('accepts every id makeThreadId produces from a well-formed directive id', async () => {
    const { makeThreadId } = await import('../src/thread-id.js');
    for (const directive of ['x', 'acme/release/summarize', 'a-b_c/d.e']) {
      expect(threadIdProblem(makeThreadId(directive, 1_739_820_456_123))).toBeUndefined();
    }
  });
});
