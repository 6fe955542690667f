import type { ConfineSpec } from './confine.js';

/** Options of {@link runSubprocess}. */
export interface SubprocessOptions {
  /** Executable to run: a name looked up on the child's PATH, or a path. Never run through a shell. */
  command: string;
  args?: readonly string[];
  cwd?: string;
  /** Extra variables. In `merge` mode an `undefined` value removes an inherited variable. */
  env?: Record<string, string | undefined>;
  /** `merge` (default): `process.env` overlaid with `env`; `replace`: `env` only. */
  envMode?: 'merge' | 'replace';
  /** Written to stdin, which is then closed. Absent: stdin is `/dev/null`. */
  input?: string | Uint8Array;
  /** Default 300 000. `0` or `Infinity`: no timeout. */
  timeoutMs?: number;
  /** Aborting kills the whole process tree; the result then has `cancelled: true`. */
  signal?: AbortSignal;
  /** Decoded chunks as they arrive. A throwing callback is ignored. */
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  /** Whole lines without their `\n` (or `\r\n`); a last partial line is flushed at exit. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Bytes of stdout (and, separately, of stderr) kept in the result; the rest is read and dropped
   * so the child never blocks, and `truncated` says how much there was. Default: no limit.
   */
  maxOutputBytes?: number;
  /** Run the command confined by Landlock to these folders (see confine.ts). */
  confine?: ConfineSpec;
}

export interface SubprocessResult {
  /** `exit_code === 0 && !timed_out && !cancelled`. */
  success: boolean;
  /** Full output, decoded as UTF-8 (invalid bytes become U+FFFD). */
  stdout: string;
  stderr: string;
  /** `-1` when killed by a signal, timed out, cancelled or failed to spawn. */
  exit_code: number;
  duration_ms: number;
  timed_out: boolean;
  cancelled?: boolean;
  /** The signal that ended the child, e.g. `SIGKILL`. */
  signal?: string;
  /** A sentence saying why the command could not be started. */
  error?: string;
  /** Set when output went over `maxOutputBytes`: the total bytes each stream produced. */
  truncated?: { stdout?: number; stderr?: number };
}

/** Options of {@link spawnDetached}. */
export interface DetachedOptions {
  command: string;
  args?: readonly string[];
  cwd?: string;
  env?: Record<string, string | undefined>;
  envMode?: 'merge' | 'replace';
  /** Appended to; absent: output is discarded. May be the same file as `stderrFile`. */
  stdoutFile?: string;
  stderrFile?: string;
  /** Fed to stdin (from an already-unlinked temporary file). Absent: stdin is `/dev/null`. */
  input?: string;
  /** Run the command confined by Landlock to these folders (see confine.ts). */
  confine?: ConfineSpec;
}

export interface DetachedResult {
  pid: number;
}
