import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { RyeError } from '../errors.js';
import { childEnv, osErrorMessage, spawnErrorSentence, validateCommon } from './shared.js';
import { killTree } from './tree.js';
import type { SubprocessOptions, SubprocessResult } from './types.js';

const DEFAULT_TIMEOUT_MS = 300_000;
/** After a tree kill, how long to wait for the pipes to close before abandoning them. */
const PIPE_GRACE_MS = 1_000;

/** The few fields of execa's subprocess and result that are used here. */
interface ExecaResultLike {
  stdout?: unknown;
  stderr?: unknown;
  exitCode?: number;
  signal?: string;
  failed: boolean;
  cause?: unknown;
}
interface ExecaChildLike extends PromiseLike<ExecaResultLike> {
  pid?: number;
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
  stdout: Readable | null;
  stderr: Readable | null;
}
type ExecaFn = (file: string, args: readonly string[], options: Record<string, unknown>) => ExecaChildLike;

let execaPromise: Promise<ExecaFn> | undefined;

/** execa is loaded on first use only, so importing the package stays cheap. */
function loadExeca(): Promise<ExecaFn> {
  execaPromise ??= import('execa').then(
    (mod) => mod.execa as unknown as ExecaFn,
    (error: unknown) => {
      execaPromise = undefined;
      throw new RyeError('SPAWN', `Cannot load execa: ${osErrorMessage(error)}`, {
        hint: 'Reinstall dependencies (pnpm install).',
        cause: error,
      });
    },
  );
  return execaPromise;
}

function validate(options: SubprocessOptions): number {
  validateCommon(options, 'runSubprocess');
  const { timeoutMs = DEFAULT_TIMEOUT_MS, input } = options;
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
    throw new RyeError('VALIDATION', 'runSubprocess: timeoutMs must be a number >= 0', {
      details: { timeoutMs },
    });
  }
  if (input !== undefined && typeof input !== 'string' && !(input instanceof Uint8Array)) {
    throw new RyeError('VALIDATION', 'runSubprocess: input must be a string or a Uint8Array');
  }
  return timeoutMs === 0 ? Number.POSITIVE_INFINITY : timeoutMs;
}

function safeCall(fn: () => unknown): void {
  try {
    const out = fn() as { catch?: unknown } | undefined;
    // An async callback that rejects must not become an unhandled rejection.
    if (out && typeof out.catch === 'function') (out as Promise<unknown>).catch(() => {});
  } catch {
    // Callbacks are observers; their failures never affect the run.
  }
}

/** Decodes one stream for the callbacks; `flush` emits the trailing partial line. Idempotent. */
function watch(stream: Readable | null, name: 'stdout' | 'stderr', options: SubprocessOptions): () => void {
  const onChunk = name === 'stdout' ? options.onStdout : options.onStderr;
  const { onLine } = options;
  if (!stream || (!onChunk && !onLine)) return () => {};
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let done = false;
  const emit = (text: string, final: boolean): void => {
    if (text === '' && !final) return;
    if (onChunk && text !== '') safeCall(() => onChunk(text));
    if (!onLine) return;
    const buffered = pending + text;
    let start = 0;
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n', start)) {
      const end = nl > start && buffered.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const line = buffered.slice(start, end);
      safeCall(() => onLine(line, name));
      start = nl + 1;
    }
    pending = buffered.slice(start);
    if (final && pending !== '') {
      const line = pending;
      pending = '';
      safeCall(() => onLine(line, name));
    }
  };
  stream.on('data', (chunk: Buffer | string) => {
    if (!done) emit(typeof chunk === 'string' ? chunk : decoder.write(chunk), false);
  });
  return () => {
    if (done) return;
    done = true;
    emit(decoder.end(), true);
  };
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return '';
}

function elapsed(start: number): number {
  return Math.round((performance.now() - start) * 1000) / 1000;
}

function notStarted(start: number, stderr: string, error: string): SubprocessResult {
  return {
    success: false,
    stdout: '',
    stderr,
    exit_code: -1,
    duration_ms: elapsed(start),
    timed_out: false,
    error,
  };
}

/**
 * Runs a command without a shell and collects its output. Never throws for a command that fails or
 * cannot be started (that is reported in the result); throws `VALIDATION` for malformed options.
 * The child leads its own process group, so a timeout or an abort kills its whole tree.
 */
export async function runSubprocess(options: SubprocessOptions): Promise<SubprocessResult> {
  const start = performance.now();
  const timeoutMs = validate(options);
  const { command, args = [], cwd, signal } = options;
  if (command === '') return notStarted(start, 'No command specified', 'No command specified');
  if (signal?.aborted) {
    const stderr = 'Command cancelled before it started';
    return {
      success: false,
      stdout: '',
      stderr,
      exit_code: -1,
      duration_ms: 0,
      timed_out: false,
      cancelled: true,
    };
  }

  const execa = await loadExeca();
  const env = childEnv(options.env, options.envMode);
  let child: ExecaChildLike;
  try {
    child = execa(command, args, {
      cwd,
      env: env ?? process.env,
      extendEnv: false,
      ...(options.input === undefined ? { stdin: 'ignore' } : { input: options.input }),
      stdout: 'pipe',
      stderr: 'pipe',
      encoding: 'utf8',
      stripFinalNewline: false,
      maxBuffer: Number.POSITIVE_INFINITY,
      reject: false,
      detached: true,
      cleanup: false,
      windowsHide: true,
    });
  } catch (error) {
    return notStarted(
      start,
      `Failed to spawn: ${osErrorMessage(error)}`,
      spawnErrorSentence(error, command, cwd),
    );
  }

  const flushStdout = watch(child.stdout, 'stdout', options);
  const flushStderr = watch(child.stderr, 'stderr', options);
  let timedOut = false;
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  let graceTimer: NodeJS.Timeout | undefined;

  const terminate = (): void => {
    const { pid } = child;
    if (pid === undefined || graceTimer !== undefined) return;
    const leaderAlive = child.exitCode === null && child.signalCode === null;
    killTree(pid, 'SIGKILL', leaderAlive);
    // A process that left the group may still hold the pipes: stop waiting for them eventually.
    graceTimer = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, PIPE_GRACE_MS);
  };
  const onAbort = (): void => {
    cancelled = true;
    terminate();
  };
  if (child.pid !== undefined) {
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => {
        timedOut = true;
        terminate();
      }, timeoutMs);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  }

  let result: ExecaResultLike;
  try {
    result = await child;
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    signal?.removeEventListener('abort', onAbort);
  }
  flushStdout();
  flushStderr();

  const stdout = asText(result.stdout);
  let stderr = asText(result.stderr);
  if (child.pid === undefined) {
    const cause = result.cause ?? result;
    return notStarted(
      start,
      `Failed to spawn: ${osErrorMessage(cause)}`,
      spawnErrorSentence(cause, command, cwd),
    );
  }
  if (timedOut) stderr = `Command timed out after ${timeoutMs / 1000} seconds\n${stderr}`;
  else if (cancelled) stderr = `Command cancelled\n${stderr}`;
  const killed = timedOut || cancelled || result.signal !== undefined || result.exitCode === undefined;
  const exitCode = killed ? -1 : (result.exitCode ?? -1);
  const out: SubprocessResult = {
    success: exitCode === 0 && !timedOut && !cancelled,
    stdout,
    stderr,
    exit_code: exitCode,
    duration_ms: elapsed(start),
    timed_out: timedOut,
  };
  if (cancelled) out.cancelled = true;
  if (result.signal !== undefined) out.signal = result.signal;
  return out;
}
