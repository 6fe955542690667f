/**
 * rye/file-system writes against a concurrent process that swaps the folder being written for a
 * symlink to a protected folder (~/.ai/config) after the path was checked. The write module is
 * called directly (as the warm worker calls it), so the swap can be placed exactly, and raced.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const LIB = join(import.meta.dirname, '..', '.ai', 'tools', 'rye', 'file-system', '_lib');
type AtomicWrite = (
  real: string,
  shown: string,
  content: string,
  mode: number | undefined,
  root: string,
) => number;
const { atomicWrite } = (await import(join(LIB, 'atomic-write.mjs'))) as { atomicWrite: AtomicWrite };

/** Swaps `a` and `b` (a folder and a symlink) with renameat2(RENAME_EXCHANGE) until killed. */
const SWAPPER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print('ready', flush=True)
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit('renameat2: errno %d' % ctypes.get_errno())
`;

let base: string;
let project: string;
let config: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'rye-fs-race-')));
  project = join(base, 'project');
  config = join(base, 'home', '.ai', 'config');
  await mkdir(join(project, 'd'), { recursive: true });
  await mkdir(config, { recursive: true });
  process.env.USER_SPACE = join(base, 'home');
});

afterEach(async () => {
  delete process.env.USER_SPACE;
  await rm(base, { recursive: true, force: true });
});

describe('atomicWrite pinned to the checked folder', () => {
  it('refuses a folder swapped for a link after the check, writing nothing through it', async () => {
    // The path was checked while d was a folder; d is now a link to ~/.ai/config.
    const checked = join(project, 'd', 'w.txt');
    await rm(join(project, 'd'), { recursive: true });
    await symlink(config, join(project, 'd'));
    expect(() => atomicWrite(checked, 'd/w.txt', 'pwned', undefined, project)).toThrow(
      /^'d\/w\.txt' was not written: a part of its path is not a folder/,
    );
    expect(await readdir(config)).toEqual([]);
  });

  it('creates missing folders below the root and writes there', async () => {
    const real = join(project, 'new', 'deep', 'f.txt');
    expect(atomicWrite(real, 'new/deep/f.txt', 'hello', undefined, project)).toBe(5);
    expect(await readdir(join(project, 'new', 'deep'))).toEqual(['f.txt']);
  });

  it.runIf(process.platform === 'linux')(
    'never writes into the link target while a folder and a link swap places under it',
    async () => {
      await symlink(config, join(project, 'dlink'));
      const swapper = spawn('python3', ['-c', SWAPPER, join(project, 'd'), join(project, 'dlink')], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        await new Promise((resolve, reject) => {
          swapper.stdout.once('data', resolve);
          swapper.once('error', reject);
          swapper.once('exit', (code) => reject(new Error(`swapper exited ${code}`)));
        });
        const outcomes = new Map<string, number>();
        const until = performance.now() + 1500;
        for (let i = 0; performance.now() < until; i++) {
          let outcome = 'written';
          try {
            atomicWrite(join(project, 'd', `w${i % 5}`), `d/w${i % 5}`, 'pwned', undefined, project);
          } catch (error) {
            outcome = (error as Error).message.replace(/w\d/, 'wN');
            expect((error as Error).constructor.name, outcome).toBe('ToolError');
          }
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
        expect(outcomes.get('written'), JSON.stringify([...outcomes])).toBeGreaterThan(0);
      } finally {
        swapper.kill('SIGKILL');
        await new Promise((resolve) => swapper.once('close', resolve));
      }
      // Nothing in ~/.ai/config, and no temp file left in the folder (now at d or dlink) either.
      expect(await readdir(config)).toEqual([]);
      for (const name of ['d', 'dlink'])
        expect((await readdir(join(project, name))).filter((file) => file.endsWith('.tmp'))).toEqual([]);
    },
    20_000,
  );
});
