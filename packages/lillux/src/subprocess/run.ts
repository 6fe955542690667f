import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { childProcess } from '../child-process.js';
import { monotonicMs } from '../clock.js';
import { RyeError } from '../errors.js';
import {
  childEnv,
  elapsed,
  launchLine,
  osErrorMessage,
  spawnErrorSentence,
  validateCommon,
} from './shared.js';
import { groupProbe, killGroup, killTree } from './tree.js';
import type { SubprocessOptions, SubprocessResult } from './types.js';

const DEFAULT_TIMEOUT_MS = 300_000;
/** After the leader exits, how long its group gets between SIGTERM and SIGKILL. */
const GROUP_GRACE_MS = 500;
/** Longest pause between two probes of a signalled group (the first probes come sooner). */
const GROUP_PROBE_MAX_MS = 16;
/** After a tree kill, how long to wait for the pipes to close before abandoning them. */
const PIPE_GRACE_MS = 1_000;

interface ChildOutcome {
  stdout: Collected;
  stderr: Collected;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started. */
  spawnError?: unknown;
}

/** Collects a stream's bytes; decoding happens once at the end (invalid UTF-8 → U+FFFD). */
interface Collected {
  bytes: Buffer;
  /** Total bytes the stream produced (more than `bytes.length` when capped). */
  total: number;
}

/** Buffers a stream up to `limit` bytes and keeps counting (and draining) past it. */
function collect(stream: Readable | null, limit: number): () => Collected {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  stream?.on('data', (chunk: Buffer) => {
    total += chunk.length;
    if (kept >= limit) return;
    const part = kept + chunk.length > limit ? chunk.subarray(0, limit - kept) : chunk;
    chunks.push(part);
    kept += part.length;
  });
  return () => ({ bytes: Buffer.concat(chunks), total });
}

/** Waits for the child to exit and its pipes to close (or be destroyed after a tree kill). */
function settle(child: ChildProcess, limit: number): Promise<ChildOutcome> {
  const stdout = collect(child.stdout, limit);
  const stderr = collect(child.stderr, limit);
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: Omit<ChildOutcome, 'stdout' | 'stderr'>) => {
      if (done) return;
      done = true;
      resolve({ ...outcome, stdout: stdout(), stderr: stderr() });
    };
    child.once('error', (error) => {
      if (child.pid === undefined) finish({ exitCode: null, signal: null, spawnError: error });
    });
    child.once('close', (exitCode, signal) => finish({ exitCode, signal }));
  });
}

/**
 * Ends the group a reaped leader left behind: SIGTERM, then SIGKILL for whatever is still in it
 * after the grace period. Resolves at once when the group is already empty (the common case: no
 * timer, no wait), as soon as nothing in it can run any more (zombies awaiting their reaper do not
 * count), or right after the SIGKILL - never before, so a run (and a short-lived caller such as the
 * CLI) cannot end while a member that ignores SIGTERM is alive. An abort cuts the grace short:
 * SIGKILL at once. Whatever is left when it resolves gets SIGKILL.
 */
function endGroup(pgid: number, signal: AbortSignal | undefined): Promise<void> {
  if (!killGroup(pgid, 'SIGTERM')) return Promise.resolve();
  const deadline = monotonicMs() + GROUP_GRACE_MS;
  const alive = groupProbe(pgid);
  return new Promise((resolve) => {
    let pause = 1;
    let timer: NodeJS.Timeout | undefined;
    const finish = (kill: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (kill) killGroup(pgid, 'SIGKILL');
      resolve();
    };
    const onAbort = (): void => finish(true);
    // Referenced on purpose: this timer is what keeps a process from exiting before the SIGKILL.
    const probe = (): void => {
      const left = deadline - monotonicMs();
      // Nothing left that runs — but a process whose main thread exited reads as a zombie while
      // its other threads still run: the group gets SIGKILL anyway (a no-op for real zombies and
      // for a group that is gone).
      if (!alive()) finish(true);
      else if (left <= 0) finish(true);
      else {
        timer = setTimeout(probe, Math.min(pause, left));
        pause = Math.min(pause * 2, GROUP_PROBE_MAX_MS);
      }
    };
    if (signal?.aborted) {
      finish(true);
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(probe, pause);
  });
}

function validate(options: SubprocessOptions): number {
  validateCommon(options, 'runSubprocess');
  const cap = options.maxOutputBytes;
  if (cap !== undefined && !(Number.isSafeInteger(cap) && cap > 0)) {
    throw new RyeError(
      'VALIDATION',
      `runSubprocess: maxOutputBytes must be a positive integer, got ${String(cap)}`,
    );
  }
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

function cancelledBeforeStart(): SubprocessResult {
  return {
    success: false,
    stdout: '',
    stderr: 'Command cancelled before it started',
    exit_code: -1,
    duration_ms: 0,
    timed_out: false,
    cancelled: true,
  };
}

/**
 * Runs a command without a shell and collects its output. Never throws for a command that fails or
 * cannot be started (that is reported in the result); throws `VALIDATION` for malformed options.
 * The child leads its own process group, so a timeout or an abort kills its whole tree.
 */
export async function runSubprocess(options: SubprocessOptions): Promise<SubprocessResult> {
  const start = monotonicMs();
  const timeoutMs = validate(options);
  const { command, args = [], cwd, signal } = options;
  if (command === '') return notStarted(start, 'No command specified', 'No command specified');
  if (signal?.aborted) return cancelledBeforeStart();

  const env = childEnv(options.env, options.envMode);
  const line = launchLine(command, args, options.confine, 'runSubprocess');
  let child: ChildProcess;
  try {
    child = childProcess().spawn(line.command, line.args, {
      cwd,
      env: env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      // Leading its own process group lets a timeout kill the whole tree.
      detached: true,
      windowsHide: true,
    });
  } catch (error) {
    return notStarted(
      start,
      `Failed to spawn: ${osErrorMessage(error)}`,
      spawnErrorSentence(error, command, cwd),
    );
  }
  const outcome = settle(child, options.maxOutputBytes ?? Number.POSITIVE_INFINITY);
  if (options.input !== undefined && child.stdin) {
    // A child that exits without reading all its input closes the pipe: that is not our failure.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  }

  const flushStdout = watch(child.stdout, 'stdout', options);
  const flushStderr = watch(child.stderr, 'stderr', options);
  let timedOut = false;
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  /** Set when the leader exits on its own: settles once its group is empty or SIGKILLed. */
  let groupEnded: Promise<void> | undefined;

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
  const pid = child.pid;
  if (pid !== undefined) {
    if (Number.isFinite(timeoutMs)) {
      // setTimeout overflows above 2^31-1 ms and would fire at once: cap it (≈ 24.8 days).
      timer = setTimeout(
        () => {
          timedOut = true;
          terminate();
        },
        Math.min(timeoutMs, 2 ** 31 - 1),
      );
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    // The run ends with its leader: a background child it left behind (`sleep 100 &`) must not
    // outlive it, even one that ignores SIGTERM: the run does not resolve before its group is
    // empty or SIGKILLed (see endGroup). The group is signalled, not the reaped leader's pid. A
    // child that left the group (setsid()) escapes this (only a cgroup would catch it). After a
    // timeout or an abort (graceTimer set) the tree has already had SIGKILL.
    child.once('exit', () => {
      if (graceTimer !== undefined) return;
      // One that escaped the group may still hold our pipes: stop waiting for them eventually.
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, GROUP_GRACE_MS + PIPE_GRACE_MS).unref();
      groupEnded = endGroup(pid, signal);
    });
  }

  let result: ChildOutcome;
  try {
    result = await outcome;
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    signal?.removeEventListener('abort', onAbort);
  }
  flushStdout();
  flushStderr();
  // The leader and its output are done: what is left is bounded by GROUP_GRACE_MS, and an abort
  // now only hastens the SIGKILL (the run is not reported cancelled).
  await groupEnded;

  if (result.spawnError !== undefined || child.pid === undefined) {
    const cause = result.spawnError;
    return notStarted(
      start,
      `Failed to spawn: ${osErrorMessage(cause)}`,
      spawnErrorSentence(cause, command, cwd),
    );
  }
  return finishedResult(result, { start, timeoutMs, timedOut, cancelled });
}

/** The result of a run whose leader started and ended: output, exit, and why it was stopped. */
function finishedResult(
  result: ChildOutcome,
  run: { start: number; timeoutMs: number; timedOut: boolean; cancelled: boolean },
): SubprocessResult {
  const { start, timeoutMs, timedOut, cancelled } = run;
  const stdout = result.stdout.bytes.toString('utf8');
  let stderr = result.stderr.bytes.toString('utf8');
  if (timedOut) stderr = `Command timed out after ${timeoutMs / 1000} seconds\n${stderr}`;
  else if (cancelled) stderr = `Command cancelled\n${stderr}`;
  const killed = timedOut || cancelled || result.signal !== null || result.exitCode === null;
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
  if (result.signal !== null) out.signal = result.signal;
  const truncated: NonNullable<SubprocessResult['truncated']> = {};
  if (result.stdout.total > result.stdout.bytes.length) truncated.stdout = result.stdout.total;
  if (result.stderr.total > result.stderr.bytes.length) truncated.stderr = result.stderr.total;
  if (truncated.stdout !== undefined || truncated.stderr !== undefined) out.truncated = truncated;
  return out;
}
