/** The run snapshot store: content-addressed, private, repaired when damaged, pruned when stale. */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { materializeSnapshot, snapshotPresent, snapshotRoot } from '../src/snapshot.js';
import type { Space } from '../src/spaces.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
  const base = mkdtempSync(join(tmpdir(), 'rye-snap-'));
  dirs.push(base);
  const space: Space = { name: 'project', label: 'project', base: join(base, 'project') };
  const tool = join(space.base, '.ai', 'tools', 'demo', 'tool.js');
  mkdirSync(join(space.base, '.ai', 'tools', 'demo'), { recursive: true });
  writeFileSync(tool, 'on disk');
  return { base, space, tool, root: snapshotRoot(join(base, 'user')) };
}

describe('run snapshots', () => {
  it('hold the verified text, not what is on disk, and map files and their folders', () => {
    const { space, tool, root } = setup();
    const snapshot = materializeSnapshot(root, [{ path: tool, text: 'verified', space }]);
    const copy = snapshot.map(tool)!;
    expect(readFileSync(copy, 'utf8')).toBe('verified');
    expect(snapshot.map(join(space.base, '.ai', 'tools', 'demo'))).toBe(join(copy, '..'));
    expect(snapshot.map(space.base)).toBeUndefined();
    expect(readFileSync(join(snapshot.dir, 'package.json'), 'utf8')).toContain('"module"');
  });

  it('rewrites verified paths inside larger arguments, whole components only', () => {
    const { space, tool, root } = setup();
    const snapshot = materializeSnapshot(root, [{ path: tool, text: 'verified', space }]);
    const copy = snapshot.map(tool)!;
    expect(snapshot.rewrite(`--script=${tool}`)).toBe(`--script=${copy}`);
    expect(snapshot.rewrite(`${tool},${tool}`)).toBe(`${copy},${copy}`);
    expect(snapshot.rewrite(`${tool}x`)).toBe(`${tool}x`);
    expect(snapshot.rewrite('-c')).toBe('-c');
  });

  it('the same files give the same snapshot; other bytes give another', () => {
    const { space, tool, root } = setup();
    const a = materializeSnapshot(root, [{ path: tool, text: 'one', space }]);
    const b = materializeSnapshot(root, [{ path: tool, text: 'one', space }]);
    const c = materializeSnapshot(root, [{ path: tool, text: 'two', space }]);
    expect(b.dir).toBe(a.dir);
    expect(c.dir).not.toBe(a.dir);
  });

  it('a damaged snapshot is rewritten', () => {
    const { space, tool, root } = setup();
    const first = materializeSnapshot(root, [{ path: tool, text: 'good', space }]);
    const copy = first.map(tool)!;
    chmodSync(copy, 0o644);
    writeFileSync(copy, 'tampered');
    rmSync(join(first.dir, '.complete'));
    const again = materializeSnapshot(root, [{ path: tool, text: 'good', space }]);
    expect(readFileSync(again.map(tool)!, 'utf8')).toBe('good');
  });

  it('a snapshot this process already checked is checked again once a file in it was replaced or written', () => {
    const { space, tool, root } = setup();
    const first = materializeSnapshot(root, [{ path: tool, text: 'good', space }]);
    const copy = first.map(tool)!;
    // Another file renamed over the copy (what a write through a file tool does), marker kept.
    const planted = join(first.dir, 'planted');
    writeFileSync(planted, 'tampered');
    renameSync(planted, copy);
    const again = materializeSnapshot(root, [{ path: tool, text: 'good', space }]);
    expect(readFileSync(again.map(tool)!, 'utf8')).toBe('good');
    // The same file written in place.
    chmodSync(copy, 0o644);
    writeFileSync(copy, 'tamper');
    const third = materializeSnapshot(root, [{ path: tool, text: 'good', space }]);
    expect(readFileSync(third.map(tool)!, 'utf8')).toBe('good');
    expect(snapshotPresent(third.dir)).toBe(true);
  });

  it('snapshots unused for two weeks are pruned when a new one is written', () => {
    const { space, tool, root } = setup();
    const old = materializeSnapshot(root, [{ path: tool, text: 'old', space }]);
    const longAgo = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    utimesSync(join(old.dir, '.complete'), longAgo, longAgo);
    materializeSnapshot(root, [{ path: tool, text: 'new', space }]);
    expect(existsSync(old.dir)).toBe(false);
  });

  it('refuses a snapshot root that another user could write to or that is a symlink', () => {
    const { base } = setup();
    const user = join(base, 'shared');
    mkdirSync(join(user, '.ai', 'state', 'snapshots'), { recursive: true });
    chmodSync(join(user, '.ai', 'state', 'snapshots'), 0o777);
    expect(() => snapshotRoot(user)).toThrow(/writable by group or others/);
    const linked = join(base, 'linked');
    mkdirSync(join(linked, '.ai', 'state'), { recursive: true });
    symlinkSync(join(base, 'elsewhere'), join(linked, '.ai', 'state', 'snapshots'));
    mkdirSync(join(base, 'elsewhere'), { mode: 0o700 });
    expect(() => snapshotRoot(linked)).toThrow(/not a directory/);
  });

  it('refuses a file outside its space', () => {
    const { base, space, root } = setup();
    const outside = join(base, 'outside.js');
    writeFileSync(outside, 'x');
    expect(() => materializeSnapshot(root, [{ path: outside, text: 'x', space }])).toThrow(
      /outside its space/,
    );
  });
});
