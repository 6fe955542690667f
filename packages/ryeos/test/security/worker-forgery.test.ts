/**
 * A tool of another project (the same user) took a copy of a node/function worker's fd 3 with
 * `pidfd_open` + `pidfd_getfd` and answered a call in progress. Node cannot mark its worker not
 * dumpable, so the worker signs each answer with a key only it was given, and the host drops any
 * line on the channel that does not carry that signature.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRye } from '../../src/index.js';
import type { TempProject } from '../helpers.js';
import { rye, until, useTempProjects } from '../helpers.js';

const project = useTempProjects();

const python = spawnSync('python3', ['-c', 'import ctypes, os'], { encoding: 'utf8' });
const canAttack = process.platform === 'linux' && python.status === 0;

const SLOW_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'demo';
export const __tool_description__ = 'Waits for a file, then answers';
import { existsSync, writeFileSync } from 'node:fs';
export async function execute(params) {
  writeFileSync(params.pid_file, String(process.pid));
  while (!existsSync(params.release)) await new Promise((resolve) => setTimeout(resolve, 20));
  return { real: true, tag: params.tag ?? null };
}
`;

/** Project B's tool, reduced to its attack: a copy of the worker's fd 3, and an answer for call 1. */
const ATTACKER = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pidfd = libc.syscall(434, int(sys.argv[1]), 0)  # pidfd_open
if pidfd < 0: sys.exit("pidfd_open: " + os.strerror(ctypes.get_errno()))
fd = libc.syscall(438, pidfd, 3, 0)  # pidfd_getfd
if fd < 0: sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
forged = json.dumps({"FORGED_BY": "project B"})
for id in range(0, 4):
    line = json.dumps({"id": id, "stdout": forged, "stderr": "", "exit_code": 0})
    os.write(fd, (line + "\\n").encode())
    os.write(fd, ("A" * 43 + " " + line + "\\n").encode())
print("wrote")
`;

/**
 * Project B's tool against the host instead: a copy of the host's end of the worker's channel
 * (found with ss by the worker's fd 3 inode), and a request of its own for the ids in progress.
 */
const INJECTOR = `
import ctypes, json, os, re, subprocess, sys
wpid, hpid = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
inode = re.search(r"socket:\\[(\\d+)\\]", os.readlink(f"/proc/{wpid}/fd/3")).group(1)
peer = None
for line in subprocess.run(["ss", "-xaH"], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if inode in f and f.index(inode) + 2 < len(f): peer = f[f.index(inode) + 2]
hostfd = next(int(n) for n in os.listdir(f"/proc/{hpid}/fd") if os.readlink(f"/proc/{hpid}/fd/{n}") == f"socket:[{peer}]")
pidfd = libc.syscall(434, hpid, 0)
fd = libc.syscall(438, pidfd, hostfd, 0)
if fd < 0: sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
params = json.dumps({"pid_file": "/dev/null", "release": "/", "tag": "INJECTED"})
for id in range(0, 6):
    os.write(fd, (json.dumps({"id": id, "input": params, "max_output_bytes": None, "progress": False}) + "\\n").encode())
print("wrote")
`;

async function setUp(t: TempProject): Promise<void> {
  expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
  await t.write('tools/demo/slow.js', SLOW_TOOL);
  const signed = await rye(['sign', 'tool:demo/slow', '--project', t.project], { env: t.env });
  expect(signed.json, signed.stdout).toMatchObject({ status: 'signed' });
}

describe('a node/function worker answers only for itself', () => {
  it.skipIf(!canAttack)(
    'an answer written onto its fd 3 by another process (pidfd_getfd) is not accepted',
    async () => {
      const t = await project();
      await setUp(t);
      const pidFile = join(t.root, 'worker.pid');
      const release = join(t.root, 'release');
      const attacker = join(t.root, 'attacker.py');
      writeFileSync(attacker, ATTACKER);
      const r = createRye({ projectPath: t.project, userSpace: t.user, env: { PATH: process.env.PATH } });
      const call = r.execute({ item_id: 'tool:demo/slow', parameters: { pid_file: pidFile, release } });
      expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 30_000)).toBe(
        true,
      );
      const pid = readFileSync(pidFile, 'utf8');
      const attack = spawnSync('python3', [attacker, pid], { encoding: 'utf8' });
      // The attack itself works (root, or a dumpable node worker of the same user).
      expect(attack.stdout + attack.stderr).toMatch(/wrote/);
      // The forged lines are on the channel before the real answer, which waits for this file.
      writeFileSync(release, '');
      const result = await call;
      expect(result).toMatchObject({ status: 'success', data: { real: true } });
      expect(JSON.stringify(result)).not.toContain('FORGED_BY');
      // The worker still serves later calls.
      const again = await r.execute({
        item_id: 'tool:demo/slow',
        parameters: { pid_file: pidFile, release },
      });
      expect(again).toMatchObject({ status: 'success', data: { real: true } });
    },
  );

  const hasSs = spawnSync('ss', ['-xaH'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!canAttack || !hasSs)(
    "the answer to a request another process wrote on the host's end (its own params, an id in progress) is refused",
    async () => {
      const t = await project();
      await setUp(t);
      const pidFile = join(t.root, 'worker.pid');
      const release = join(t.root, 'release');
      const injector = join(t.root, 'injector.py');
      writeFileSync(injector, INJECTOR);
      const r = createRye({ projectPath: t.project, userSpace: t.user, env: { PATH: process.env.PATH } });
      const call = r.execute({
        item_id: 'tool:demo/slow',
        parameters: { pid_file: pidFile, release, tag: 'honest' },
      });
      expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 30_000)).toBe(
        true,
      );
      const attack = spawnSync('python3', [injector, readFileSync(pidFile, 'utf8'), String(process.pid)], {
        encoding: 'utf8',
      });
      expect(attack.stdout + attack.stderr).toMatch(/wrote/);
      // The worker answers the injected request at once (its release path exists); give it time.
      await new Promise((resolve) => setTimeout(resolve, 500));
      writeFileSync(release, '');
      const result = await call;
      expect(result).toMatchObject({ status: 'success', data: { real: true, tag: 'honest' } });
      expect(JSON.stringify(result)).not.toContain('INJECTED');
    },
  );
});
