/**
 * realPath inside an operation resolves a path from its folder's real path and one lstat (once the
 * process is past its first lookups, which ask realpath(3)); it must answer exactly as realpath(3)
 * does, links anywhere on the path included.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { withinOperation } from '../src/observations.js';
import { realPath, setYoungLookups } from '../src/real-paths.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'rye-realpath-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

mkdirSync(join(root, 'a', 'b'), { recursive: true });
mkdirSync(join(root, 'other'));
writeFileSync(join(root, 'a', 'b', 'f.txt'), 'x');
writeFileSync(join(root, 'other', 'g.txt'), 'y');
symlinkSync(join(root, 'a'), join(root, 'dirlink')); // a folder link
symlinkSync('b/f.txt', join(root, 'a', 'filelink')); // a relative file link
symlinkSync('../../other', join(root, 'a', 'b', 'up')); // a link that climbs
symlinkSync(join(root, 'loop2'), join(root, 'loop1'));
symlinkSync(join(root, 'loop1'), join(root, 'loop2'));

const cases = [
  'a/b/f.txt',
  'dirlink/b/f.txt',
  'dirlink/filelink',
  'a/b/up/g.txt',
  'dirlink/b/up/g.txt',
  'dirlink/b/up/../a/b', // `..` after a link: the link target's parent, not the text's
  'a/b',
  'a/b/',
  'dirlink/', // a trailing slash: lstat would follow the link
  'dirlink/b/up/',
  '.',
];

describe.each([
  ['walking from the folder', 0],
  ['in a young process (realpath(3))', 1_000],
])('realPath %s', (_, young) => {
  beforeEach(() => setYoungLookups(young));
  afterAll(() => setYoungLookups(0));

  it('answers as realpath(3) inside and outside an operation, links anywhere on the path', () => {
    for (const rel of cases) {
      const raw = rel === '.' ? root : `${root}/${rel}`;
      const expected = realpathSync.native(raw);
      expect(
        withinOperation(() => realPath(raw)),
        rel,
      ).toBe(expected);
      expect(realPath(raw), rel).toBe(expected);
    }
  });

  it('throws as realpath(3) does for a missing path, a file used as a folder and a loop', () => {
    for (const rel of ['a/missing', 'a/b/f.txt/x', 'loop1/x', 'loop1']) {
      const path = join(root, rel);
      const code = (() => {
        try {
          realpathSync.native(path);
        } catch (error) {
          return (error as NodeJS.ErrnoException).code;
        }
      })();
      expect(code, rel).toBeDefined();
      expect(() => withinOperation(() => realPath(path)), rel).toThrow(expect.objectContaining({ code }));
    }
  });
});
