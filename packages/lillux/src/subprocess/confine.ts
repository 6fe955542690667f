/**
 * OS confinement of a child process with Linux Landlock: the command is started through a small
 * Python launcher (launcher/landlock.py, ctypes only) that restricts itself to the folders of a
 * {@link ConfineSpec} and then execs the command, so the command and everything it starts can
 * reach only those folders, and cannot ptrace (read /proc/<pid>/environ, take fds of) or signal
 * a process outside its own domain.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childProcess } from '../child-process.js';
import { RyeError } from '../errors.js';

export interface ConfineSpec {
  /** Folders (or files) the process may read and execute, with everything beneath them. */
  readonly readOnly: readonly string[];
  /** Folders (or files) it may also write, create in, remove from and rename within. */
  readonly writable: readonly string[];
  /** Where Landlock is unavailable, run the command unconfined instead of refusing to run it. */
  readonly bestEffort?: boolean;
  /** The Python 3 that runs the launcher (default `python3`, looked up on the child's PATH). */
  readonly python?: string;
}

/** Exit code of the launcher when it refuses to run the command unconfined. */
export const CONFINE_REFUSED_EXIT = 125;

let launcher: string | undefined;

/** The launcher script: beside this module's build, or through the package when bundled elsewhere. */
export function confineLauncherPath(): string {
  if (launcher) return launcher;
  const beside = fileURLToPath(new URL('../launcher/landlock.py', import.meta.url));
  launcher = existsSync(beside)
    ? beside
    : createRequire(import.meta.url).resolve('@ryeos/lillux/launcher/landlock.py');
  return launcher;
}

/** Throws `VALIDATION` unless every path is absolute (a relative one would follow the cwd). */
export function validateConfine(spec: unknown, fn: string): asserts spec is ConfineSpec {
  const paths = (value: unknown) =>
    Array.isArray(value) && value.every((p) => typeof p === 'string' && isAbsolute(p));
  const s = spec as Partial<ConfineSpec> | null;
  if (typeof s !== 'object' || s === null || !paths(s.readOnly) || !paths(s.writable)) {
    throw new RyeError('VALIDATION', `${fn}: confine needs readOnly and writable lists of absolute paths`, {
      hint: 'Pass { readOnly: ["/usr", …], writable: ["/path/of/the/run"] }.',
    });
  }
}

/** The command line that runs `command args` under the launcher, confined to `spec`. */
export function confinedCommand(
  command: string,
  args: readonly string[],
  spec: ConfineSpec,
): { command: string; args: string[] } {
  const json = JSON.stringify({
    read: spec.readOnly,
    write: spec.writable,
    best_effort: spec.bestEffort === true,
  });
  // -I -S: no PYTHON* variables, user site or site-packages of the child's environment run first.
  return {
    command: spec.python ?? 'python3',
    args: ['-I', '-S', confineLauncherPath(), json, '--', command, ...args],
  };
}

/** What this machine offers: the Landlock ABI (0 when unavailable) and, then, why. */
export function landlockSupport(python = 'python3'): { abi: number; why: string } {
  const probe = childProcess().spawnSync(python, ['-I', '-S', confineLauncherPath(), '--abi'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  try {
    const answer = JSON.parse(probe.stdout) as { abi: number; why: string };
    return { abi: answer.abi, why: answer.why };
  } catch {
    return {
      abi: 0,
      why: `${python} could not run the Landlock probe: ${probe.error?.message ?? probe.stderr.trim()}`,
    };
  }
}
