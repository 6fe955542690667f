import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Executor, readSettings } from '../src/index.js';

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rye-user-space-'));
  dirs.push(dir);
  return dir;
}

describe('the user space of an embedder that passes settings or an environment', () => {
  it('is the one its settings name, not the home folder', async () => {
    const userSpace = await tempDir();
    const executor = await Executor.create({ settings: readSettings({ USER_SPACE: userSpace }) });
    expect(executor.spaces.user.base).toBe(userSpace);
    expect(executor.settings.signingKeyDir.startsWith(userSpace)).toBe(true);
  });

  it('is the one its environment names', async () => {
    const userSpace = await tempDir();
    const executor = await Executor.create({ env: { USER_SPACE: userSpace } });
    expect(executor.spaces.user.base).toBe(userSpace);
    expect(executor.settings.userSpace).toBe(userSpace);
  });

  it('an explicit userSpace still wins', async () => {
    const [named, explicit] = [await tempDir(), await tempDir()];
    const executor = await Executor.create({ env: { USER_SPACE: named }, userSpace: explicit });
    expect(executor.spaces.user.base).toBe(explicit);
  });
});
