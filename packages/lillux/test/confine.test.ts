/**
 * Landlock confinement through the launcher (launcher/landlock.py): a command confined to one
 * folder can write there and cannot read a sibling, nor another process's /proc/<pid>/environ; a
 * confined warm worker is a process of its own, never shared with unconfined calls.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confineLauncherPath } from '../src/subprocess/confine.js';
import type { ConfineSpec } from '../src/subprocess.js';
import {
  CONFINE_REFUSED_EXIT,
  landlockSupport,
  runSubprocess,
  spawnDetached,
  WorkerPool,
} from '../src/subprocess.js';

const NODE = process.execPath;
// What the interpreters need: the system folders and this node's own prefix.
const SYSTEM = ['/usr', '/lib', '/lib64', '/bin', '/etc', '/proc', dirname(dirname(NODE))];

/** A warm worker answering each call with the text of the file its input names (or the error code). */
const READER = `
const { readFileSync } = await import('node:fs');
const { Socket } = await import('node:net');
const { createInterface } = await import('node:readline');
const channel = new Socket({ fd: 3, readable: true, writable: true });
createInterface({ input: channel }).on('line', (line) => {
  const request = JSON.parse(line);
  let stdout;
  try { stdout = readFileSync(request.input, 'utf8'); } catch (error) { stdout = 'denied:' + error.code; }
  channel.write(JSON.stringify({ id: request.id, stdout, stderr: '', exit_code: 0 }) + '\\n');
});
`;

const available = landlockSupport().abi > 0;
let root: string;
let mine: string;
let sibling: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'confine-'));
  mine = join(root, 'mine');
  sibling = join(root, 'sibling');
  await mkdir(mine);
  await mkdir(sibling);
  await writeFile(join(sibling, 'secret.txt'), 'sibling-secret');
  await writeFile(join(root, 'reader.mjs'), READER);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const spec = (): ConfineSpec => ({
  readOnly: [...SYSTEM, join(root, 'reader.mjs')],
  writable: [mine, '/dev/null'],
});

describe.runIf(available)('a confined subprocess', () => {
  it('writes in its folder and cannot read a sibling folder', async () => {
    const result = await runSubprocess({
      command: 'sh',
      args: [
        '-c',
        'echo written > "$1/out.txt" && cat "$1/out.txt"; cat "$2/secret.txt"',
        'sh',
        mine,
        sibling,
      ],
      confine: spec(),
    });
    expect(result.stdout).toBe('written\n');
    expect(result.stderr).toContain('Permission denied');
    expect(result.stdout).not.toContain('sibling-secret');
    expect(await readFile(join(mine, 'out.txt'), 'utf8')).toBe('written\n');
  });

  it("cannot read another process's environ", async () => {
    const other = spawn('sleep', ['30'], { env: { ...process.env, OTHER_SECRET: 'other-environ-secret' } });
    try {
      const result = await runSubprocess({
        command: 'cat',
        args: [`/proc/${other.pid}/environ`],
        confine: spec(),
      });
      expect(result.exit_code).not.toBe(0);
      expect(result.stdout).not.toContain('other-environ-secret');
      // The same read unconfined succeeds: the refusal is the confinement's.
      const open = await runSubprocess({ command: 'cat', args: [`/proc/${other.pid}/environ`] });
      expect(open.stdout).toContain('other-environ-secret');
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('confines a detached process too', async () => {
    const log = join(mine, 'detached.log');
    await spawnDetached({
      command: 'sh',
      args: ['-c', 'cat "$1/secret.txt" || echo refused', 'sh', sibling],
      stdoutFile: log,
      stderrFile: log,
      confine: spec(),
    });
    let text = '';
    for (let i = 0; i < 100 && !text.includes('refused'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      text = await readFile(log, 'utf8');
    }
    expect(text).toContain('Permission denied');
    expect(text).not.toContain('sibling-secret');
  });

  it('refuses a relative path in the spec before starting anything', async () => {
    await expect(
      runSubprocess({ command: 'true', confine: { readOnly: ['usr'], writable: [] } }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('confines a warm worker, which never serves an unconfined call', async () => {
    const pool = new WorkerPool();
    try {
      const base = {
        command: NODE,
        args: [join(root, 'reader.mjs')],
        cwd: mine,
        env: { PATH: process.env.PATH ?? '' },
        input: join(sibling, 'secret.txt'),
      };
      const confined = await pool.run({ ...base, confine: spec() });
      expect(confined.stdout).toBe('denied:EACCES');
      const unconfined = await pool.run(base);
      expect(unconfined.stdout).toBe('sibling-secret');
      expect(pool.size).toBe(2);
      // The confined worker again: still confined.
      expect((await pool.run({ ...base, confine: spec() })).stdout).toBe('denied:EACCES');
    } finally {
      await pool.close();
    }
  });
});

describe('the launcher where Landlock is missing', () => {
  // The launcher run with a libc whose syscall() fails with ENOSYS, as on a kernel before 5.13.
  const withoutLandlock = (bestEffort: boolean) =>
    runSubprocess({
      command: 'python3',
      args: [
        '-I',
        '-S',
        '-c',
        `import ctypes, runpy, sys
class Libc:
    def __init__(self, *a, **k):
        self.syscall = lambda *a: -1
        self.prctl = lambda *a: 0
ctypes.CDLL = Libc
ctypes.get_errno = lambda: 38
sys.argv = [sys.argv[1], sys.argv[2], '--', 'echo', 'ran']
runpy.run_path(sys.argv[0], run_name='__main__')`,
        confineLauncherPath(),
        JSON.stringify({ read: [], write: [], best_effort: bestEffort }),
      ],
    });

  it('refuses to run the command (fails closed)', async () => {
    const result = await withoutLandlock(false);
    expect(result.exit_code).toBe(CONFINE_REFUSED_EXIT);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Landlock is unavailable: the kernel is older than 5.13');
  });

  it('runs it unconfined when the caller asked for best effort', async () => {
    const result = await withoutLandlock(true);
    expect(result.stdout).toBe('ran\n');
  });
});
