/**
 * The two ways a warm worker is hosted: a child process (requests and answers as JSON lines both
 * ways on its fd 3, a socket), or a worker thread of the host speaking the same messages over its
 * port. The pool above sees one `Channel` either way.
 *
 * The protocol lives on fd 3 only. Its stdin is /dev/null and its stdout and stderr are only its
 * log: whatever the tool (or a program it starts with inherited stdio) writes to fd 1 or 2 can
 * never pass for an answer, and what it reads from fd 0 is never a request. A program started
 * with inherited stdio shares fd 0 with the worker, and starting one clears O_NONBLOCK on it;
 * nothing of the protocol is there to block.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { childProcess } from '../child-process.js';
import { bootableThread, bootThread, reportedThreadId, takePrestartedThread } from '../thread-boot.js';
import { killTree, threadChildren } from './tree.js';
import { type AnswerKey, answerKey } from './worker-signing.js';

/** A message from a worker: an answer (`id` + result fields) or an output chunk of a call. */
export type WorkerMessage = Record<string, unknown>;

export interface ChannelEvents {
  message(message: WorkerMessage): void;
  /** The worker is gone (exited, crashed, or could not start); `reason` says why. */
  exit(reason: string, spawnError?: unknown): void;
}

export interface Channel {
  send(message: WorkerMessage): void;
  /** Ends the worker at once (its whole process tree for a process). */
  kill(): void;
  /** Lets the host exit while the worker idles (and holds it while calls run). */
  hold(busy: boolean): void;
  /** Settles once the worker has exited (a thread: and what its tool left running was killed). */
  readonly ended: Promise<void>;
}

export interface ChannelSpec {
  command: string;
  args: readonly string[];
  cwd: string | undefined;
  env: Record<string, string>;
  /** Run `args[0]` as a worker thread of this process instead of starting `command`. */
  thread: boolean;
  /** Give a process worker a key and accept only the lines it signed with it (protocol 2). */
  signedAnswers?: boolean;
}

/** Output a worker wrote outside any call, kept (the tail) to explain a crash. */
const LAST_WORDS_BYTES = 4_096;
/** How long the answers of a worker that exited may still arrive before it is reported gone. */
const EXIT_GRACE_MS = 250;
/** Longest protocol line accepted; a worker that writes more is broken and is stopped. */
const MAX_LINE_BYTES = 256 * 1024 * 1024;

function lastWordsKeeper() {
  let text = '';
  return {
    add(chunk: Buffer | string) {
      text = (text + chunk.toString()).slice(-LAST_WORDS_BYTES);
    },
    get: () => text.trim(),
  };
}

export function openChannel(spec: ChannelSpec, events: ChannelEvents): Channel {
  return spec.thread ? threadChannel(spec, events) : processChannel(spec, events);
}

function processChannel(spec: ChannelSpec, events: ChannelEvents): Channel {
  const lastWords = lastWordsKeeper();
  let child: ChildProcess;
  let gone = false;
  const exit = (reason: string, spawnError?: unknown) => {
    if (gone) return;
    gone = true;
    events.exit(reason, spawnError);
  };
  try {
    child = childProcess().spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      // Its own process group: a kill takes whatever the worker started (python forks a child per call).
      detached: true,
      windowsHide: true,
    });
  } catch (error) {
    queueMicrotask(() => exit('could not start', error));
    return { send() {}, kill() {}, hold() {}, ended: Promise.resolve() };
  }
  const ended = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => {
      if (child.pid === undefined) resolve();
    });
  });
  child.on('error', (error) => {
    if (child.pid === undefined) exit('could not start', error);
  });
  child.stdout?.on('data', (chunk: Buffer) => lastWords.add(chunk));
  child.stderr?.on('data', (chunk: Buffer) => lastWords.add(chunk));
  const channel = child.stdio[3] as Duplex | null;
  // The key is the first line the worker reads; from then on a line must carry its signature.
  const key: AnswerKey | undefined = spec.signedAnswers ? answerKey(randomBytes(32)) : undefined;
  if (key) channel?.write(`${JSON.stringify({ key: key.secret })}\n`);
  let dropped = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  channel?.on('error', () => {}); // a worker that died closes its end: reported by 'close'
  channel?.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      const line = pending.length
        ? Buffer.concat([...pending, chunk.subarray(start, i)]).toString('utf8')
        : chunk.toString('utf8', start, i);
      pending = [];
      pendingBytes = 0;
      start = i + 1;
      deliver(line);
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_LINE_BYTES) {
        lastWords.add('\n(worker wrote a protocol line longer than the limit)');
        kill();
      }
    }
  });
  const deliver = (signedLine: string) => {
    if (!signedLine.trim()) return;
    if (key) {
      const message = key.open(signedLine);
      if (message) events.message(message);
      // Not the worker's: another process wrote onto its fd 3, or answered a request of its own.
      // Said once, in what explains a crash.
      else if (!dropped) {
        lastWords.add('\n(a line the worker did not sign was dropped from its answer channel)');
        dropped = true;
      }
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(signedLine);
    } catch {
      lastWords.add(`${signedLine}\n`);
      return;
    }
    if (message && typeof message === 'object' && !Array.isArray(message))
      events.message(message as WorkerMessage);
  };
  const reportExit = (code: number | null, signal: NodeJS.Signals | null) => {
    const words = lastWords.get();
    exit(`exited (${signal ?? `code ${code}`})${words ? `: ${words}` : ''}`);
  };
  child.on('close', reportExit);
  // 'close' waits for every stdio stream to close, and a program the worker left outside its
  // process group (a detached daemon holding its stdout) can hold one open: a worker that died
  // would then never be reported, and its calls would wait for their timeout. Once it has
  // exited, what it wrote gets a moment to be read, then its streams are let go.
  child.once('exit', (code, signal) => {
    setTimeout(() => {
      if (gone) return;
      for (const stream of [channel, child.stdout, child.stderr]) stream?.destroy();
      reportExit(code, signal);
    }, EXIT_GRACE_MS).unref();
  });
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      // Held until it has exited, so that a host awaiting `ended` is not ended by an empty loop
      // first (its pipes stay unheld: a program the worker started could keep them open).
      child.ref();
      killTree(child.pid, 'SIGKILL');
    }
  };
  return {
    send(message) {
      const line = JSON.stringify(message);
      key?.sent(message.id, line);
      channel?.write(`${line}\n`);
    },
    kill,
    hold(busy) {
      // An idle worker must not keep a one-shot host (the CLI) alive; when the host exits, the
      // worker reads end-of-file on fd 3 and exits too.
      const handles = [child, child.stdout, child.stderr, channel] as Array<{
        ref?: () => void;
        unref?: () => void;
      } | null>;
      for (const handle of handles) (busy ? handle?.ref : handle?.unref)?.call(handle);
    },
    ended,
  };
}

function threadChannel(spec: ChannelSpec, events: ChannelEvents): Channel {
  const lastWords = lastWordsKeeper();
  let gone = false;
  const exit = (reason: string, spawnError?: unknown) => {
    if (gone) return;
    gone = true;
    events.exit(reason, spawnError);
  };
  let worker: Worker;
  // What the tool starts is a child of this process, in the host's process group, where a worker
  // process would take its own group with it. After each call, the children the tool's thread
  // started are killed, with their descendants; when the thread ends (stopped, crashed, or by the
  // tool's own hand), its children pass to the main thread, and every child of it the host did not
  // have when the thread was opened goes. The thread tells its kernel id first thing (its later
  // messages cannot change it). Only a one-shot host asks for a thread, and it starts no other
  // process while the call runs.
  const hostChildren = new Set(threadChildren([process.pid]));
  let called = false;
  let toldId = false;
  let threadId: number | undefined;
  const killToolChildren = (threadGone: boolean) => {
    if (!called) return;
    // A thread's children pass, when it ends, to the first live thread of the process: the main
    // one. Without the thread's id, every thread's children are looked at.
    const threads = threadId === undefined ? undefined : threadGone ? [process.pid, threadId] : [threadId];
    for (const pid of threadChildren(threads)) if (!hostChildren.has(pid)) killTree(pid, 'SIGKILL');
  };
  // Once stopped, the thread runs no more JavaScript, but a spawn it was in the middle of may
  // still complete: what it left is looked for again as the host exits.
  const atHostExit = () => killToolChildren(true);
  let threadEnded: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    threadEnded = resolve;
  });
  try {
    // A thread cannot have a working directory of its own: the host's becomes the worker's.
    if (spec.cwd !== undefined && resolve(spec.cwd) !== process.cwd()) process.chdir(spec.cwd);
    worker = takePrestartedThread() ?? bootableThread(spec.env);
    bootThread(worker, spec.args[0]!, spec.args.slice(1), spec.env);
  } catch (error) {
    queueMicrotask(() => exit('could not start', error));
    return { send() {}, kill() {}, hold() {}, ended: Promise.resolve() };
  }
  worker.on('message', (message: unknown) => {
    if (!toldId) {
      toldId = true;
      const tid = reportedThreadId(message);
      if (tid !== undefined) {
        threadId = tid > 0 && tid !== process.pid ? tid : undefined;
        return;
      }
    }
    if (message && typeof message === 'object' && !Array.isArray(message))
      events.message(message as WorkerMessage);
  });
  worker.on('error', (error) => lastWords.add(`${error?.stack ?? error}\n`));
  worker.on('exit', (code) => {
    process.off('exit', atHostExit);
    killToolChildren(true);
    threadEnded();
    const words = lastWords.get();
    exit(`exited (code ${code})${words ? `: ${words}` : ''}`);
  });
  return {
    send(message) {
      called = true;
      worker.postMessage(message);
    },
    kill() {
      worker.ref(); // held until it has exited (see processChannel's kill)
      void worker.terminate();
      killToolChildren(false);
      process.once('exit', atHostExit);
    },
    hold(busy) {
      if (busy) worker.ref();
      else {
        worker.unref();
        // No call is running: whatever the tool left running goes, as its process group would.
        killToolChildren(false);
      }
    },
    ended,
  };
}
