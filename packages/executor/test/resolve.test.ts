/**
 * Item resolution reads each candidate folder once (one listing answers every extension): what
 * it finds must be exactly what a stat per extension found — order, shadowing, ambiguity, links,
 * and the errors for ids the file system cannot hold.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveItem, Spaces } from '../src/index.js';

const EXTENSIONS = ['.py', '.yaml', '.js'];
const roots: string[] = [];

function workspace() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rye-resolve-')));
  roots.push(root);
  const spaces = new Spaces({ projectPath: join(root, 'project'), userSpace: join(root, 'user') });
  const put = (space: 'project' | 'user', rel: string, text = 'x') => {
    const path = join(root, space, '.ai', 'tools', rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  return { root, spaces, put };
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('resolveItem', () => {
  it('finds the file of an id in the first space that has it, and names what it shadows', async () => {
    const { spaces, put } = workspace();
    const mine = put('project', 'acme/count.js');
    const theirs = put('user', 'acme/count.yaml');
    put('project', 'acme/counter.py'); // a longer name with the same start is another item
    const found = await resolveItem(spaces, 'tool', 'acme/count', EXTENSIONS, { collectShadowed: true });
    expect(found).toMatchObject({ path: mine, extension: '.js', space: { name: 'project' } });
    expect(found?.shadowed).toEqual([{ path: theirs, space: 'user' }]);
    expect(await resolveItem(spaces, 'tool', 'acme/none', EXTENSIONS)).toBeUndefined();
    expect(await resolveItem(spaces, 'tool', 'nowhere/deep/count', EXTENSIONS)).toBeUndefined();
  });

  it('refuses two files of one id in one space, in extension order', async () => {
    const { spaces, put } = workspace();
    const js = put('project', 'acme/count.js');
    const py = put('project', 'acme/count.py');
    await expect(resolveItem(spaces, 'tool', 'acme/count', EXTENSIONS)).rejects.toThrow(
      `2 files in project space have this id: ${py} and ${js}`,
    );
  });

  it('follows a link to a file inside the space, refuses one leading out, ignores folders', async () => {
    const { root, spaces, put } = workspace();
    const real = put('project', 'acme/real.js');
    symlinkSync(real, join(dirname(real), 'alias.js'));
    expect(await resolveItem(spaces, 'tool', 'acme/alias', EXTENSIONS)).toMatchObject({ path: real });
    const outside = join(root, 'outside.js');
    writeFileSync(outside, 'x');
    symlinkSync(outside, join(dirname(real), 'escape.js'));
    await expect(resolveItem(spaces, 'tool', 'acme/escape', EXTENSIONS)).rejects.toThrow(/outside its space/);
    mkdirSync(join(dirname(real), 'folder.py'));
    expect(await resolveItem(spaces, 'tool', 'acme/folder', EXTENSIONS)).toBeUndefined();
    symlinkSync(join(dirname(real), 'missing.js'), join(dirname(real), 'dangling.js'));
    expect(await resolveItem(spaces, 'tool', 'acme/dangling', EXTENSIONS)).toBeUndefined();
  });

  it('treats a file used as a folder as absent, and names an id too long for the file system', async () => {
    const { spaces, put } = workspace();
    put('project', 'acme.js');
    expect(await resolveItem(spaces, 'tool', 'acme.js/inner', EXTENSIONS)).toBeUndefined();
    for (const id of ['a'.repeat(300), `${'b'.repeat(300)}/tool`]) {
      await expect(resolveItem(spaces, 'tool', id, EXTENSIONS)).rejects.toThrow(/Item id too long/);
    }
  });
});
