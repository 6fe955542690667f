/**
 * The launcher's supervisor (`--supervise`): a child subreaper above the command, which kills and
 * reaps every process the command left (setsid, double fork) when it exits or on SIGTERM, then
 * empties its "clean" folder without following links; and `--remove`, which empties a folder of
 * any depth without following links.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { confineLauncherPath } from '../src/subprocess/confine.js';
import { landlockSupport } from '../src/subprocess.js';

const SYSTEM = ['/usr', '/lib', '/lib64', '/bin', '/etc', '/proc', '/dev'];
const available = landlockSupport().abi > 0;

function alive(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function killAll(marker: string): void {
  for (const pid of alive(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * Leaves a setsid'd sleeper and a double-forked busy loop, both named `marker`; the marker is
 * split by empty quotes in the command text, so only the detached processes carry it whole.
 */
function leaveOrphans(marker: string): string {
  const named = `${marker.slice(0, 3)}""${marker.slice(3)}`;
  return `setsid bash -c "exec -a ${named} sleep 3600" </dev/null >/dev/null 2>&1 & ( setsid bash -c "exec -a ${named}-loop bash -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 & ) ; sleep 0.2`;
}

describe.skipIf(!available)('the launcher supervisor', () => {
  let root: string;
  let marker: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'lillux-supervise-'));
    marker = `lxsup-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  });

  afterEach(async () => {
    killAll(marker);
    await rm(root, { recursive: true, force: true });
  });

  function supervise(run: string, command: string) {
    const spec = JSON.stringify({ read: SYSTEM, write: [run, '/dev/null'], clean: run });
    return spawn(
      'python3',
      ['-I', '-S', confineLauncherPath(), '--supervise', spec, '--', 'bash', '-c', command],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  }

  it('kills what the command detached when it exits, keeps its exit status, and empties the folder without following a link', async () => {
    const run = join(root, 'run');
    const outside = join(root, 'outside');
    mkdirSync(run);
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'keep');
    const child = supervise(
      run,
      `${leaveOrphans(marker)}; mkdir -p ${run}/a/b; ln -s ${outside} ${run}/a/link; echo x > ${run}/a/b/f; exit 3`,
    );
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(3);
    expect(alive(marker)).toEqual([]);
    expect(readdirSync(run)).toEqual([]);
    expect(readFileSync(join(outside, 'keep'), 'utf8')).toBe('keep');
  });

  it('kills the command and everything it detached on SIGTERM', async () => {
    const run = join(root, 'run');
    mkdirSync(run);
    const child = supervise(run, `${leaveOrphans(marker)}; sleep 3600`);
    for (let tries = 0; alive(marker).length < 2 && tries < 200; tries++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(alive(marker).length).toBeGreaterThan(0);
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(143);
    expect(alive(marker)).toEqual([]);
  });

  it('--remove empties a 3,000-deep tree, leaving what a link points at', () => {
    const run = join(root, 'run');
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'keep');
    mkdirSync(run);
    // Built with relative steps: the full path is past PATH_MAX.
    const build = spawnSync(
      'python3',
      [
        '-c',
        `import os\nos.chdir(${JSON.stringify(run)})\nfor i in range(3000):\n    os.mkdir('d'); os.chdir('d')\nos.symlink(${JSON.stringify(outside)}, 'l'); open('f', 'w').write('x')`,
      ],
      { encoding: 'utf8' },
    );
    expect(build.status, build.stderr).toBe(0);
    const removed = spawnSync(
      'python3',
      ['-I', '-S', confineLauncherPath(), '--remove', JSON.stringify({ read: [] }), run],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(removed.status, removed.stderr).toBe(0);
    expect(readdirSync(run)).toEqual([]);
    expect(existsSync(join(outside, 'keep'))).toBe(true);
  }, 150_000);
});
