import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../src/index.js';

describe('writeFileAtomic', () => {
  it('writes new files with a mode, creating parents, and leaves no temp files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lillux-files-'));
    const path = join(dir, 'a', 'b', 'key.pem');
    await writeFileAtomic(path, 'secret', { mode: 0o600, mkdirs: true });
    expect(await readFile(path, 'utf8')).toBe('secret');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, 'a', 'b'))).toEqual(['key.pem']);
  });

  it('replaces existing content and keeps the existing mode', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lillux-files-'));
    const path = join(dir, 'tool.sh');
    await writeFile(path, 'old', { mode: 0o755 });
    await writeFileAtomic(path, 'new');
    expect(await readFile(path, 'utf8')).toBe('new');
    expect((await stat(path)).mode & 0o777).toBe(0o755);
  });

  it('fails cleanly when the directory is missing, without leaving a temp file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lillux-files-'));
    await expect(writeFileAtomic(join(dir, 'missing', 'x'), 'y')).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });
});
