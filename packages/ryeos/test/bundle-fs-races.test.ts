/**
 * rye/file-system writes against a concurrent process that swaps the folder being written for a
 * symlink to a protected folder (~/.ai/config) after the path was checked. The write module is
 * called directly (as the warm worker calls it), so the swap can be placed exactly, and raced.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
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

  it('leaves nothing when it fails: no temp file, no folder it created', async () => {
    const tooLong = 'n'.repeat(256);
    expect(() =>
      atomicWrite(join(project, 'made', 'here', tooLong), 'made/here/x', 'text', undefined, project),
    ).toThrow(/^Path 'made\/here\/x' is too long for the file system$/);
    expect((await readdir(project)).sort()).toEqual(['d']);
    // A name near NAME_MAX still leaves room for the temp file's.
    const long = 'l'.repeat(250);
    expect(atomicWrite(join(project, 'd', long), `d/${long}`, 'ok', undefined, project)).toBe(2);
    expect(await readdir(join(project, 'd'))).toEqual([long]);
  });

  it.runIf(process.platform === 'linux')(
    'refuses a path through a name that is not valid UTF-8',
    async () => {
      const { resolveInside } = (await import(join(LIB, 'paths.mjs'))) as {
        resolveInside: (root: string, path: string) => Promise<unknown>;
      };
      // A folder named f\xffo (not UTF-8), reached through a link: it reads back as "f\uFFFDo".
      const name = Buffer.from([0x66, 0xff, 0x6f]);
      mkdirSync(Buffer.concat([Buffer.from(`${project}/`), name]));
      symlinkSync(name, join(project, 'lnk'));
      await expect(resolveInside(project, 'lnk/file.txt')).rejects.toThrow(
        /^Path 'lnk\/file\.txt' leads through a name that is not valid UTF-8/,
      );
    },
  );

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
