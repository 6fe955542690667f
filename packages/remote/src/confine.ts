/**
 * What a remote run's tool processes may reach on the server's machine: their own run folder
 * (read and write), and read-only what interpreters need — the system folders, this node's
 * prefix, the python the server found, and the installed ryeos packages. Never the data dir (the
 * users database, every user's store, the signing key), another run's folder or a home folder.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname } from 'node:path';
import { type ConfineSpec, landlockSupport, RyeError } from '@ryeos/lillux';

export interface RunConfinement {
  /** Read-only folders common to every run. */
  readOnly: string[];
  /** The folder of the real python binary, put first on a run's PATH (not a shim in a home folder). */
  pythonBin: string | undefined;
  /** The real python binary, which runs the launcher (a pyenv shim would add ~70 ms a call). */
  python: string | undefined;
}

/** System folders: interpreters, their libraries, their configuration, and /proc and /sys. */
const SYSTEM = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/proc',
  '/sys',
  '/dev',
];

/** Device files a tool writes: /dev itself is read-only. */
const WRITABLE_DEVICES = ['/dev/null', '/dev/zero'];

/** The ryeos packages a run's chain runs from: system bundles, runtime libraries, the launcher. */
const PACKAGES = ['@ryeos/lillux', '@ryeos/executor', '@ryeos/directives', '@ryeos/threads', 'ryeos'];

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function packageRoots(): string[] {
  const require = createRequire(import.meta.url);
  const roots: string[] = [];
  for (const name of PACKAGES) {
    try {
      roots.push(dirname(real(require.resolve(`${name}/package.json`))));
    } catch {
      // Not installed beside this server (bundled into another): its files are not needed.
    }
  }
  return roots;
}

/** The python3 on the server's PATH, as its real binary and prefix (a pyenv shim resolved). */
function python(path: string | undefined): { exe: string; bin: string; prefix: string } | undefined {
  const probe = spawnSync(
    'python3',
    ['-I', '-S', '-c', 'import os, sys; print(os.path.realpath(sys.executable)); print(sys.base_prefix)'],
    { encoding: 'utf8', env: { PATH: path ?? '' }, timeout: 20_000 },
  );
  const [exe, prefix] = (probe.stdout ?? '').trim().split('\n');
  return exe && prefix ? { exe, bin: dirname(exe), prefix: real(prefix) } : undefined;
}

/**
 * Settles what runs may reach, once at start. Throws `PERMISSION` where Landlock is unavailable
 * unless `unconfinedRuns` (then undefined: runs get the server account's rights).
 */
export function runConfinement(options: {
  unconfinedRuns?: boolean;
  path?: string;
}): RunConfinement | undefined {
  const support = landlockSupport();
  if (support.abi === 0) {
    if (options.unconfinedRuns) return undefined;
    throw new RyeError('PERMISSION', `Refusing to serve: runs cannot be confined here (${support.why})`, {
      hint: 'Run the server on Linux 5.13+ with Landlock enabled, or pass --unconfined-runs to let every user’s tools run with this server’s rights.',
    });
  }
  const found = python(options.path);
  const node = dirname(dirname(real(process.execPath)));
  return {
    readOnly: [...SYSTEM, node, ...(found ? [found.prefix, found.bin] : []), ...packageRoots()],
    pythonBin: found?.bin,
    python: found?.exe,
  };
}

/** The spec of one run: the common read-only folders, and its own folder to write in. */
export function runSpec(confinement: RunConfinement, runDir: string): ConfineSpec {
  return {
    readOnly: confinement.readOnly,
    writable: [runDir, ...WRITABLE_DEVICES],
    ...(confinement.python ? { python: confinement.python } : {}),
  };
}

/** The run's PATH with the real python's folder first, so `python3` is never a shim it cannot read. */
export function runPath(confinement: RunConfinement, path: string | undefined): string | undefined {
  if (!confinement.pythonBin) return path;
  return path ? `${confinement.pythonBin}${delimiter}${path}` : confinement.pythonBin;
}
