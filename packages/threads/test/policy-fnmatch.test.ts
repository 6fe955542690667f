import { describe, expect, it } from 'vitest';
import { fnmatch, globCovers, globIntersects, hasWildcard } from '../src/policy/fnmatch.js';

// [name, pattern, fnmatch.fnmatchcase(name, pattern)] as CPython 3.11 answers them.
const PYTHON: Array<[string, string, boolean]> = [
  ['rye.execute.tool.rye.file-system.write', 'rye.execute.tool.rye.*', true],
  ['rye.execute.tool.rye.file-system.write', 'rye.execute.tool.rye.file-system.*', true],
  ['rye.execute.tool.rye.core.x', 'rye.execute.tool.rye.file-system.*', false],
  ['rye.search.tool', 'rye.search.*', true],
  ['rye.search.tool.', 'rye.search.tool.*', true],
  ['rye.search.tool', 'rye.search.tool.*', false],
  ['abc', 'a?c', true],
  ['ac', 'a?c', false],
  ['a.c', 'a?c', true],
  ['RYE.X', 'rye.*', false],
  ['rye.x', 'RYE.*', false],
  ['a', '[abc]', true],
  ['d', '[abc]', false],
  ['d', '[!abc]', true],
  ['a', '[!abc]', false],
  ['^', '[^a]', true],
  ['b', '[^a]', false],
  ['a', '[^a]', true],
  [']', '[]]', true],
  ['a', '[]a]', true],
  [']', '[!]]', false],
  ['x', '[!]]', true],
  ['[', '[', true],
  ['[a', '[a', true],
  ['[ab', '[a*', true],
  ['x[', 'x[', true],
  ['b', '[a-c]', true],
  ['-', '[a-c]', false],
  ['-', '[a-]', true],
  ['a', '[a-]', true],
  ['-', '[-a]', true],
  ['z', '[z-a]', false],
  ['a', '[z-a]', false],
  ['q', '[!z-a]', true],
  ['c', '[z-a!b]', true],
  ['b', '[z-a!b]', false],
  ['z', '[a--z]', true],
  ['a', '[a--z]', false],
  ['-', '[a--z]', false],
  [',', '[+--]', true],
  ['+', '[+--]', true],
  ['a', '[+--]', false],
  ['\\', '[\\]', true],
  ['\\a', '\\a', true],
  ['a', '\\a', false],
  ['&', '[&&]', true],
  ['~', '[a~~b]', true],
  ['a\nb', 'a*b', true],
  ['\n', '?', true],
  ['', '*', true],
  ['', '', true],
  ['a', '', false],
  ['', '?', false],
  ['abc', '*', true],
  ['abc', 'a*c*', true],
  ['abcc', 'a*c', true],
  ['ab', 'a*c', false],
  ['a-b', '[!-]-b', true],
  ['x-b', '[!-]-b', true],
  ['!', '[!]', false],
  ['!]', '[!]]', false],
  ['é', '?', true],
  ['😀', '?', true],
  ['😀x', '?x', true],
  ['a.b.c', 'a*c', true],
  ['a.b.c', 'a.?.c', true],
  ['rye.*', 'rye.*', true],
  ['rye.x', 'rye.[*]', false],
  ['rye.*', 'rye.[*]', true],
  ['b', '[a-b-c]', true],
  ['-', '[a-b-c]', true],
  ['c', '[a-b-c]', true],
  ['x', '[a-b-c]', false],
  [']', '[]-a]', true],
  ['A', '[]-a]', false],
  ['b', '[]-a]', false],
];

describe('fnmatch (Python fnmatchcase semantics)', () => {
  it.each(PYTHON)('fnmatch(%j, %j) is %s, as in Python', (name, pattern, expected) => {
    expect(fnmatch(name, pattern)).toBe(expected);
  });

  it('[BUG] docs say * matches one segment: it matches any run, dots included', () => {
    expect(fnmatch('rye.execute.tool.rye.file-system.write', 'rye.execute.tool.rye.*')).toBe(true);
    expect(fnmatch('rye.execute.tool.a.b.c.d', 'rye.*.d')).toBe(true);
  });

  it('is anchored at both ends', () => {
    expect(fnmatch('xrye.search.tool', 'rye.search.*')).toBe(false);
    expect(fnmatch('rye.search.toolx', 'rye.search.tool')).toBe(false);
  });

  it('stays linear on patterns that make a backtracking regex explode', () => {
    const pattern = `${'a*'.repeat(40)}b`;
    const name = 'a'.repeat(50_000);
    // CPU time, which other processes' load does not add to; backtracking would take years.
    const before = process.cpuUsage();
    expect(fnmatch(name, pattern)).toBe(false);
    expect(fnmatch(`${name}b`, pattern)).toBe(true);
    expect(fnmatch('x'.repeat(50_000), '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b')).toBe(false);
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(1500);
  });

  it('hasWildcard spots *, ? and [', () => {
    expect(['rye.*', 'a?', 'x[ab]'].map(hasWildcard)).toEqual([true, true, true]);
    expect(hasWildcard('rye.execute.tool.rye.bash.bash')).toBe(false);
  });
});

describe('globCovers / globIntersects', () => {
  it('answers inclusion between patterns', () => {
    expect(globCovers('rye.*', 'rye.execute.tool.*')).toBe(true);
    expect(globCovers('rye.execute.tool.rye.*', 'rye.execute.tool.rye.*.read')).toBe(true);
    expect(globCovers('rye.execute.tool.*', 'rye.*')).toBe(false);
    // `?` matches the character `*`, but a one-character wildcard does not cover a run.
    expect(fnmatch('rye.x.a*', 'rye.x.a?')).toBe(true);
    expect(globCovers('rye.x.a?', 'rye.x.a*')).toBe(false);
    // A class containing `*` matches the name `*`, not every name.
    expect(globCovers('rye.x.[*a]', 'rye.x.*')).toBe(false);
    expect(globCovers('rye.x.?', 'rye.x.[ab]')).toBe(true);
    expect(globCovers('rye.x.[!c]', 'rye.x.[ab]')).toBe(true);
    expect(globCovers('rye.x.[!b]', 'rye.x.[ab]')).toBe(false);
    // An unclosed `[` is literal in the outer pattern; the inner one is a class.
    expect(globCovers('x[ab*', 'x[ab]')).toBe(false);
  });

  it('answers whether two patterns share a name', () => {
    expect(globIntersects('rye.*', 'rye.search.tool.?*')).toBe(true);
    expect(globIntersects('rye.execute.rye.file-system.*', 'rye.execute.tool.?*')).toBe(false);
    expect(globIntersects('rye.l?ad.*', 'rye.load.tool.?*')).toBe(true);
    expect(globIntersects('a[!a]', 'a[a]')).toBe(false);
  });

  it('agrees with brute force over every short name (seeded random patterns)', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const atoms = ['a', 'b', '.', '*', '?', '[ab]', '[!a]', '[a-b]'];
    const pattern = () =>
      Array.from({ length: Math.floor(random() * 5) }, () => atoms[Math.floor(random() * atoms.length)]).join(
        '',
      );
    const names = [''];
    for (let i = 0; names.at(-1)!.length < 5; i++)
      for (const c of ['a', 'b', '.', 'c']) names.push(names[i] + c);
    for (let i = 0; i < 400; i++) {
      const [outer, inner] = [pattern(), pattern()];
      const counterexample = names.find((n) => fnmatch(n, inner) && !fnmatch(n, outer));
      // Patterns of ≤4 tokens differ on some name of ≤5 characters when they differ at all.
      expect(globCovers(outer, inner), `covers(${outer}, ${inner})`).toBe(counterexample === undefined);
      const common = names.find((n) => fnmatch(n, inner) && fnmatch(n, outer));
      expect(globIntersects(outer, inner), `intersects(${outer}, ${inner})`).toBe(common !== undefined);
    }
  });
});
