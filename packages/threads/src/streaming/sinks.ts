/**
 * The optional stream sinks of a managed thread (spec threads §9 "Pipeline"; seed 002 "Sink
 * Types"): every raw SSE `data:` payload of a turn is fanned out to them, next to the transcript
 * sink that is built elsewhere. They are droppable by design: a UI that is down, a full disk or a
 * buggy custom sink must never fail the turn, nor slow it. So `write` only enqueues (synchronous,
 * never throws, never awaits), every queue is bounded, `close` is bounded in time and never
 * rejects, and a failing sink warns once and goes quiet instead of throwing.
 *
 * `createSinks` builds them from a provider YAML's `stream.sinks` list; a bad entry is warned about
 * and skipped, because a typo in an audit-log setting is no reason to refuse to run the thread.
 */
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { expandEnvTemplate, RyeError } from '@ryeos/lillux';
// Type only: the `ws` package is loaded on the first connection, so threads without a websocket
// sink never pay for it.
import type WebSocket from 'ws';

export interface SinkEvent {
  threadId: string;
  turn: number;
  /** The raw SSE `data:` payload: JSON text, or the literal `[DONE]`. */
  data: string;
  /** Milliseconds since the epoch. */
  at: number;
}

export interface StreamSink {
  /** 'file' | 'websocket' | 'null' | a custom kind. */
  readonly kind: string;
  /** Enqueues the event. Never throws, never blocks. */
  write(event: SinkEvent): void;
  /** Flushes what can be flushed within a short bound (<= 2 s) and releases resources. Never rejects. */
  close(): Promise<void>;
}

/** One entry of a provider YAML's `stream.sinks` list. */
export interface SinkConfig {
  type: string;
  [key: string]: unknown;
}

export interface SinkContext {
  threadId: string;
  /** The thread's own directory; a file sink may not write outside it. */
  threadDir: string;
  /** Where `${VAR}` in a websocket url is looked up. */
  env: Readonly<Record<string, string | undefined>>;
  warn(message: string): void;
}

/** How long `close` may take to flush before it gives up on what is left. */
const CLOSE_TIMEOUT_MS = 2_000;
/** Bytes a sink may hold in memory (queued or in flight) before it drops events. */
const MAX_PENDING_BYTES = 8 * 1024 * 1024;
const DEFAULT_FILE_NAME = 'sse-stream.jsonl';
const DEFAULT_RECONNECT_ATTEMPTS = 3;
const DEFAULT_BUFFER_MAX = 1_000;
const CONNECT_TIMEOUT_MS = 2_000;
const BACKOFF_BASE_MS = 100;
/** The longest wait between reconnect attempts (5 s), however many attempts `reconnect_attempts` allows. */
export const MAX_BACKOFF_MS = 5_000;
/** Sinks built into the runner, never from `stream.sinks`. */
const INTERNAL_SINKS = new Set(['transcript', 'return']);

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** A warn callback that can itself fail must not turn a dropped event into a thrown one. */
function safeWarn(warn: (message: string) => void, message: string): void {
  try {
    warn(message);
  } catch {
    // Nothing left to tell: the warning channel is broken too.
  }
}

/** Warns about each kind of trouble once per sink, so a dead UI does not flood the log per event. */
class WarnOnce {
  private readonly seen = new Set<string>();

  constructor(private readonly warn: (message: string) => void) {}

  once(key: string, message: string): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    safeWarn(this.warn, message);
  }
}

/**
 * Whether `promise` settled within `ms`. The timer is not unref'd: a caller is awaiting the answer,
 * and an unref'd timer could let the process exit under it; the bound keeps it short.
 */
function settledWithin(promise: PromiseLike<unknown>, ms: number): Promise<boolean> {
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), ms);
    const settle = (): void => {
      clearTimeout(timer);
      done(true);
    };
    promise.then(settle, settle);
  });
}

/** A timer that never keeps the process alive on its own (a reconnect nobody waits for). */
function backgroundTimer(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return timer;
}

// ---------------------------------------------------------------------------------------------
// null

/** Accepts and discards everything (`{type: null}`): a sink list can switch streaming off. */
export class NullSink implements StreamSink {
  readonly kind = 'null';

  write(_event: SinkEvent): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }
}

// ---------------------------------------------------------------------------------------------
// file

export interface FileSinkOptions {
  /** The `.jsonl` file; must lie inside `root`. */
  path: string;
  /** The directory the file must stay inside, symlinks included (the thread's directory). */
  root: string;
  warn: (message: string) => void;
  /** Default 8 MiB. */
  maxPendingBytes?: number;
  /** Default 2 s. */
  closeTimeoutMs?: number;
}

/** Thrown inside the sink when the file would land outside its root; never leaves the sink. */
class EscapeError extends Error {}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/**
 * The file sink's path: `template` (default `sse-stream.jsonl`, `{thread_id}` substituted) taken
 * relative to `threadDir`. Absolute paths and `..` segments are refused here; symlinks are checked
 * when the file is opened, since they can change until then. Throws `RyeError` (CONFIG).
 */
export function resolveFileSinkPath(
  template: string | undefined,
  threadDir: string,
  threadId: string,
): string {
  const raw = (template ?? DEFAULT_FILE_NAME).replaceAll('{thread_id}', threadId);
  const refuse = (why: string): never => {
    throw new RyeError('CONFIG', `file sink path ${JSON.stringify(raw)} ${why}`, {
      hint: 'Give a path relative to the thread directory, e.g. sse-stream.jsonl.',
    });
  };
  if (raw === '' || raw.includes('\0')) refuse('is empty or holds a NUL byte');
  // Both separators and a drive letter, whatever the platform: the YAML may come from anywhere.
  if (isAbsolute(raw) || /^[\\/]/.test(raw) || /^[A-Za-z]:/.test(raw)) refuse('is absolute');
  if (raw.split(/[\\/]/).includes('..')) refuse('climbs out with ".."');
  const path = resolve(threadDir, raw);
  if (!isInside(resolve(threadDir), path)) refuse('is not a file inside the thread directory');
  return path;
}

/** The nearest existing ancestor of `dir` (at worst `root`, which exists), symlinks resolved. */
async function realExistingAncestor(dir: string, root: string): Promise<string> {
  for (let current = dir; ; current = dirname(current)) {
    try {
      return await realpath(current);
    } catch (error) {
      const top = current === root || dirname(current) === current;
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || top) throw error;
    }
  }
}

/**
 * Raw SSE as JSONL (`{"timestamp", "thread_id", "turn", "data"}`, timestamp in epoch seconds),
 * the audit trail of what the provider sent. Lines queue in memory and are appended in batches
 * by one writer loop, so a slow disk costs memory (bounded), never the turn's time.
 */
export class FileSink implements StreamSink {
  readonly kind = 'file';
  readonly path: string;
  private readonly root: string;
  private readonly maxPendingBytes: number;
  private readonly closeTimeoutMs: number;
  private readonly warnings: WarnOnce;
  private queue: string[] = [];
  /** Bytes queued plus bytes being written. */
  private pendingBytes = 0;
  private handle: FileHandle | undefined;
  private busy = false;
  private drained: Promise<void> = Promise.resolve();
  private state: 'open' | 'closing' | 'dead' = 'open';
  private closed: Promise<void> | undefined;

  constructor(options: FileSinkOptions) {
    this.path = resolve(options.path);
    this.root = resolve(options.root);
    if (!isInside(this.root, this.path)) {
      throw new RyeError('CONFIG', `file sink path ${this.path} is not inside ${this.root}`);
    }
    this.maxPendingBytes = options.maxPendingBytes ?? MAX_PENDING_BYTES;
    this.closeTimeoutMs = options.closeTimeoutMs ?? CLOSE_TIMEOUT_MS;
    this.warnings = new WarnOnce(options.warn);
  }

  write(event: SinkEvent): void {
    if (this.state !== 'open') return;
    try {
      const line = `${JSON.stringify({
        timestamp: event.at / 1000,
        thread_id: event.threadId,
        turn: event.turn,
        data: event.data,
      })}\n`;
      const bytes = Buffer.byteLength(line);
      if (this.pendingBytes + bytes > this.maxPendingBytes) {
        this.warnings.once(
          'full',
          `file sink ${this.path}: more than ${this.maxPendingBytes} bytes waiting for the disk; dropping events`,
        );
        return;
      }
      this.queue.push(line);
      this.pendingBytes += bytes;
      this.kick();
    } catch (error) {
      this.fail(error);
    }
  }

  close(): Promise<void> {
    this.closed ??= this.finish();
    return this.closed;
  }

  private kick(): void {
    if (this.busy) return;
    this.busy = true;
    this.drained = this.pump();
  }

  /** Appends everything queued, one batch per write, until the queue is empty. */
  private async pump(): Promise<void> {
    try {
      const handle = this.handle ?? (await this.openFile());
      while (this.queue.length > 0 && this.state !== 'dead') {
        const batch = this.queue.join('');
        const bytes = this.pendingBytes;
        this.queue = [];
        await handle.appendFile(batch, 'utf8');
        this.pendingBytes -= bytes;
      }
    } catch (error) {
      this.fail(error);
    } finally {
      // In the same continuation as the loop's last check, so no write can slip in between.
      this.busy = false;
    }
  }

  /**
   * Opens for append, created 0600 (it holds model output). The directory chain is checked with
   * symlinks resolved before and after it is made, and the file itself may not be a symlink.
   */
  private async openFile(): Promise<FileHandle> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const realRoot = await realpath(this.root);
    const parent = dirname(this.path);
    const check = (real: string): void => {
      if (real !== realRoot && !isInside(realRoot, real)) throw new EscapeError(real);
    };
    // Before mkdir: a recursive mkdir through an escaping symlink would create folders outside.
    check(await realExistingAncestor(parent, this.root));
    await mkdir(parent, { recursive: true, mode: 0o700 });
    check(await realpath(parent));
    const noFollow = constants.O_NOFOLLOW ?? 0;
    let handle: FileHandle;
    try {
      handle = await open(
        this.path,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | noFollow,
        0o600,
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new EscapeError(this.path);
      throw error;
    }
    if (this.state === 'dead') {
      await handle.close().catch(() => undefined);
      throw new Error('closed');
    }
    this.handle = handle;
    return handle;
  }

  private fail(error: unknown): void {
    const wasDead = this.state === 'dead';
    this.state = 'dead';
    this.queue = [];
    this.pendingBytes = 0;
    if (wasDead) return;
    if (error instanceof EscapeError) {
      this.warnings.once(
        'fail',
        `file sink ${this.path}: resolves outside the thread directory through a symlink (${error.message}); the sink is disabled`,
      );
    } else {
      this.warnings.once('fail', `file sink ${this.path}: ${errorText(error)}; the sink is disabled`);
    }
    void this.release();
  }

  private async finish(): Promise<void> {
    if (this.state === 'open') this.state = 'closing';
    const drained = this.drained;
    const inTime = await settledWithin(drained, this.closeTimeoutMs);
    if (!inTime && this.state !== 'dead') {
      this.warnings.once(
        'slow-close',
        `file sink ${this.path}: could not flush within ${this.closeTimeoutMs} ms; the rest is dropped`,
      );
    }
    this.state = 'dead';
    this.queue = [];
    // A write still in flight finishes first; the handle is closed after it, in the background.
    if (inTime) await this.release();
    else void drained.then(() => this.release());
  }

  private async release(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// websocket

export interface WebSocketSinkOptions {
  /** A ws:// or wss:// URL, `${VAR}` already expanded. */
  url: string;
  /** Consecutive failed connection attempts after the first before giving up. Default 3. */
  reconnectAttempts?: number;
  /** Hold events while connecting or disconnected (else drop them). Default true. */
  bufferOnDisconnect?: boolean;
  /** Events held at most; the oldest go first. Default 1000. */
  bufferMax?: number;
  warn: (message: string) => void;
  /** Default 2 s. */
  connectTimeoutMs?: number;
  /** Default 2 s. */
  closeTimeoutMs?: number;
  /** First reconnect delay, doubled per failed attempt. Default 100 ms. */
  backoffBaseMs?: number;
}

type WebSocketClass = typeof WebSocket;

let wsModule: Promise<WebSocketClass> | undefined;

function loadWebSocket(): Promise<WebSocketClass> {
  wsModule ??= import('ws').then((module) => module.default);
  return wsModule;
}

/** `${VAR}` / `${VAR:-default}` expanded from `env`, then checked to be ws:// or wss://. Throws `RyeError`. */
export function resolveWebSocketUrl(
  template: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return checkWebSocketUrl(expandEnvTemplate(template, env).trim());
}

function checkWebSocketUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RyeError('CONFIG', `websocket sink url ${JSON.stringify(url)} is not a URL`, {
      hint: 'Use ws://host:port/path or wss://…, e.g. ${THREAD_UI_WEBSOCKET_URL:-ws://localhost:8080/events}.',
    });
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new RyeError('CONFIG', `websocket sink url must be ws:// or wss://, got ${parsed.protocol}//`, {
      hint: 'Use ws://host:port/path or wss://….',
    });
  }
  return url;
}

/** The url for messages: no credentials, no query (a token may ride in either). */
function displayUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** A FIFO bounded in count and bytes that drops its oldest entries to make room. */
class DropOldestQueue {
  private items: string[] = [];
  private head = 0;
  private bytes = 0;

  constructor(
    private readonly maxItems: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.items.length - this.head;
  }

  /** Adds `item`; returns how many older items were dropped to make room. */
  push(item: string): number {
    this.items.push(item);
    this.bytes += Buffer.byteLength(item);
    let dropped = 0;
    while (this.size > 0 && (this.size > this.maxItems || this.bytes > this.maxBytes)) {
      this.bytes -= Buffer.byteLength(this.items[this.head]!);
      this.head++;
      dropped++;
    }
    // Compact now and then, so dropping stays O(1) amortised and the array does not grow.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return dropped;
  }

  drain(): string[] {
    const out = this.items.slice(this.head);
    this.clear();
    return out;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
    this.bytes = 0;
  }
}

function checkCount(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new RyeError('CONFIG', `websocket sink: ${name} must be an integer >= 0, got ${value}`);
  }
  return value;
}

/** The wait before reconnect attempt `failures` (1-based): doubling from `baseMs`, capped. */
export function reconnectDelayMs(baseMs: number, failures: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, failures - 1));
}

type SocketState = 'idle' | 'connecting' | 'open' | 'backoff' | 'dead' | 'closed';

/**
 * Sends each event as a JSON text message (`{"thread_id", "turn", "data", "timestamp"}`) to a UI.
 * Connects on the first event; while connecting or disconnected, events wait in a bounded buffer.
 * A dropped connection is retried with doubling backoff (capped at `MAX_BACKOFF_MS`); after
 * `reconnectAttempts` consecutive failures the sink gives up for the rest of the stream. Only `close` keeps the process alive, and
 * only for its bound: retries and connect timeouts run on unref'd timers.
 */
export class WebSocketSink implements StreamSink {
  readonly kind = 'websocket';
  readonly url: string;
  private readonly reconnectAttempts: number;
  private readonly bufferOnDisconnect: boolean;
  private readonly connectTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly backoffBaseMs: number;
  private readonly warnings: WarnOnce;
  private readonly buffer: DropOldestQueue;
  private state: SocketState = 'idle';
  private socket: WebSocket | undefined;
  /** The connect timeout or the backoff before the next attempt. */
  private timer: NodeJS.Timeout | undefined;
  /** Consecutive failed attempts since the last open connection. */
  private failures = 0;
  private lastError: string | undefined;
  private closing: { resolve: () => void; deadline: NodeJS.Timeout } | undefined;
  private closed: Promise<void> | undefined;

  constructor(options: WebSocketSinkOptions) {
    this.url = checkWebSocketUrl(options.url);
    this.reconnectAttempts = checkCount(
      'reconnectAttempts',
      options.reconnectAttempts ?? DEFAULT_RECONNECT_ATTEMPTS,
    );
    this.bufferOnDisconnect = options.bufferOnDisconnect ?? true;
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.closeTimeoutMs = options.closeTimeoutMs ?? CLOSE_TIMEOUT_MS;
    this.backoffBaseMs = options.backoffBaseMs ?? BACKOFF_BASE_MS;
    this.buffer = new DropOldestQueue(
      this.bufferOnDisconnect ? checkCount('bufferMax', options.bufferMax ?? DEFAULT_BUFFER_MAX) : 0,
      MAX_PENDING_BYTES,
    );
    this.warnings = new WarnOnce(options.warn);
  }

  write(event: SinkEvent): void {
    if (this.closing || this.state === 'dead' || this.state === 'closed') return;
    try {
      const message = JSON.stringify({
        thread_id: event.threadId,
        turn: event.turn,
        data: event.data,
        timestamp: event.at / 1000,
      });
      if (this.state === 'open') {
        this.send(message);
        return;
      }
      this.hold(message);
      if (this.state === 'idle') this.connect();
    } catch (error) {
      this.giveUp(`the event could not be sent (${errorText(error)})`);
    }
  }

  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      const deadline = setTimeout(() => this.finishClose(), this.closeTimeoutMs);
      this.closing = { resolve, deadline };
      if (this.state === 'open') this.shutdown();
      // Nothing to flush, or no connection to flush it through: done. A connection still being
      // made with events waiting gets until the deadline to open and take them.
      else if (this.state !== 'connecting' && this.state !== 'backoff') this.finishClose();
      else if (this.buffer.size === 0) this.finishClose();
    });
    return this.closed;
  }

  private hold(message: string): void {
    if (!this.bufferOnDisconnect) return;
    if (this.buffer.push(message) > 0) {
      this.warnings.once(
        'buffer',
        `websocket sink ${displayUrl(this.url)}: not connected and the buffer is full; dropping the oldest events`,
      );
    }
  }

  private send(message: string): void {
    const socket = this.socket!;
    // Closing under us (the 'close' event is still to come): keep it for the next connection.
    if (socket.readyState !== socket.OPEN) {
      this.hold(message);
      return;
    }
    // A reader slower than the model: ws would queue without limit, so the bound is kept here.
    if (socket.bufferedAmount > MAX_PENDING_BYTES) {
      this.warnings.once(
        'slow',
        `websocket sink ${displayUrl(this.url)}: the receiver is not keeping up; dropping events`,
      );
      return;
    }
    // A failed send shows up as a closed socket, which the reconnect logic handles.
    socket.send(message, () => undefined);
  }

  private connect(): void {
    this.state = 'connecting';
    loadWebSocket().then(
      (WebSocketClass) => this.dial(WebSocketClass),
      (error) => this.giveUp(`cannot load the ws package: ${errorText(error)}`),
    );
  }

  private dial(WebSocketClass: WebSocketClass): void {
    if (this.state !== 'connecting') return;
    let socket: WebSocket;
    try {
      socket = new WebSocketClass(this.url, {
        handshakeTimeout: this.connectTimeoutMs,
        // Small JSON events: compressing them costs the turn's CPU for little gain.
        perMessageDeflate: false,
      });
    } catch (error) {
      this.giveUp(`the connection could not be started (${errorText(error)})`);
      return;
    }
    this.socket = socket;
    // Our own bound as well as ws's handshake timeout: it also covers a TCP connect that hangs.
    this.timer = backgroundTimer(this.connectTimeoutMs, () => socket.terminate());
    socket.on('open', () => this.opened(socket));
    // Always listened to: an 'error' event without a listener would crash the process.
    socket.on('error', (error: Error) => {
      this.lastError = errorText(error);
    });
    socket.on('close', () => this.lost(socket));
  }

  private opened(socket: WebSocket): void {
    if (socket !== this.socket || this.state !== 'connecting') return;
    this.clearTimer();
    this.state = 'open';
    this.failures = 0;
    for (const message of this.buffer.drain()) this.send(message);
    if (this.closing) this.shutdown();
  }

  /** The socket closed: ours on purpose, the server's doing, or an attempt that failed. */
  private lost(socket: WebSocket): void {
    if (socket !== this.socket) return;
    this.socket = undefined;
    this.clearTimer();
    if (this.state === 'dead' || this.state === 'closed') return;
    if (this.closing && this.buffer.size === 0) {
      this.finishClose();
      return;
    }
    if (this.state === 'open') this.failures = 0;
    this.failures++;
    if (this.failures > this.reconnectAttempts) {
      this.giveUp(
        `${this.failures} connection attempt(s) in a row failed (last: ${this.lastError ?? 'connection closed'})`,
      );
      return;
    }
    this.state = 'backoff';
    const delay = reconnectDelayMs(this.backoffBaseMs, this.failures);
    this.timer = backgroundTimer(delay, () => {
      this.timer = undefined;
      if (this.state === 'backoff') this.connect();
    });
  }

  /** Everything is sent: close politely; the 'close' event (or the deadline) ends `close()`. */
  private shutdown(): void {
    try {
      this.socket?.close(1000, 'stream ended');
    } catch {
      this.finishClose();
    }
  }

  private giveUp(reason: string): void {
    if (this.state === 'dead' || this.state === 'closed') return;
    this.state = 'dead';
    this.warnings.once(
      'gave-up',
      `websocket sink ${displayUrl(this.url)}: giving up, ${reason}; events are no longer sent`,
    );
    this.release();
    if (this.closing) this.finishClose();
  }

  private finishClose(): void {
    const closing = this.closing;
    if (!closing || this.state === 'closed') return;
    clearTimeout(closing.deadline);
    this.state = 'closed';
    this.release();
    closing.resolve();
  }

  private release(): void {
    this.clearTimer();
    this.buffer.clear();
    const socket = this.socket;
    this.socket = undefined;
    try {
      socket?.terminate();
    } catch {
      // Already gone.
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// building and fan-out

function integerSetting(config: SinkConfig, key: string, fallback: number, max: number): number {
  const value = config[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new RyeError('CONFIG', `${key} must be an integer from 0 to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function booleanSetting(config: SinkConfig, key: string, fallback: boolean): boolean {
  const value = config[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') {
    throw new RyeError('CONFIG', `${key} must be true or false, got ${JSON.stringify(value)}`);
  }
  return value;
}

function fileSinkFrom(config: SinkConfig, context: SinkContext): FileSink {
  const { path, format } = config;
  if (path !== undefined && path !== null && typeof path !== 'string') {
    throw new RyeError('CONFIG', `path must be a string, got ${JSON.stringify(path)}`);
  }
  if (format !== undefined && format !== null && format !== 'jsonl') {
    throw new RyeError('CONFIG', `format must be jsonl, got ${JSON.stringify(format)}`);
  }
  return new FileSink({
    path: resolveFileSinkPath(path ?? undefined, context.threadDir, context.threadId),
    root: context.threadDir,
    warn: context.warn,
  });
}

function webSocketSinkFrom(config: SinkConfig, context: SinkContext): WebSocketSink {
  const { url } = config;
  if (typeof url !== 'string' || url.trim() === '') {
    throw new RyeError('CONFIG', 'url is required (ws:// or wss://)');
  }
  return new WebSocketSink({
    url: resolveWebSocketUrl(url, context.env),
    reconnectAttempts: integerSetting(config, 'reconnect_attempts', DEFAULT_RECONNECT_ATTEMPTS, 100),
    bufferOnDisconnect: booleanSetting(config, 'buffer_on_disconnect', true),
    bufferMax: integerSetting(config, 'buffer_max', DEFAULT_BUFFER_MAX, 1_000_000),
    warn: context.warn,
  });
}

function sinkFrom(config: unknown, context: SinkContext): StreamSink | string {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return 'is not a mapping';
  const entry = config as SinkConfig;
  const type = entry.type;
  if (typeof type !== 'string') return 'has no type';
  if (INTERNAL_SINKS.has(type)) return `(${type}) is built in and always on; it cannot be configured`;
  try {
    switch (type) {
      case 'null':
        return new NullSink();
      case 'file':
        return fileSinkFrom(entry, context);
      case 'websocket':
        return webSocketSinkFrom(entry, context);
      default:
        return `has unknown type ${JSON.stringify(type)} (known: file, websocket, null)`;
    }
  } catch (error) {
    return `(${type}): ${errorText(error)}`;
  }
}

/**
 * The optional sinks of a provider's `stream.sinks` list. Never throws: an entry that is unknown or
 * invalid is warned about and skipped, and the thread streams without it.
 */
export function createSinks(configs: readonly SinkConfig[] | undefined, context: SinkContext): StreamSink[] {
  if (configs === undefined || configs === null) return [];
  if (!Array.isArray(configs)) {
    safeWarn(context.warn, 'stream.sinks must be a list; no optional sinks are used');
    return [];
  }
  const sinks: StreamSink[] = [];
  for (const [index, config] of configs.entries()) {
    const sink = sinkFrom(config, context);
    if (typeof sink === 'string') safeWarn(context.warn, `stream.sinks[${index}] ${sink}; skipped`);
    else sinks.push(sink);
  }
  return sinks;
}

/**
 * Hands each event to every sink. A sink that throws (or whose write returns a rejected promise)
 * is warned about once and skipped for the rest of the stream; the others never notice.
 */
export class FanOut {
  private readonly live: Set<StreamSink>;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly sinks: readonly StreamSink[],
    private readonly warn: (message: string) => void,
  ) {
    this.live = new Set(sinks);
  }

  write(event: SinkEvent): void {
    if (this.closed) return;
    for (const sink of this.live) {
      try {
        const result: unknown = sink.write(event);
        // A custom sink may be async despite the type; its rejection must not go unhandled.
        if (isThenable(result)) result.then(undefined, (error: unknown) => this.disable(sink, error));
      } catch (error) {
        this.disable(sink, error);
      }
    }
  }

  /** Closes every sink, disabled ones too (they may hold files or sockets). Never rejects. */
  close(): Promise<void> {
    this.closed ??= Promise.all(this.sinks.map((sink) => this.closeOne(sink))).then(() => undefined);
    return this.closed;
  }

  /**
   * Starts closing every sink and waits at most `ms` for them: what is flushed by then is kept,
   * the rest finishes (or is dropped) on each sink's own bound without anyone waiting.
   */
  async closeWithin(ms: number): Promise<void> {
    await settledWithin(this.close(), ms);
  }

  private disable(sink: StreamSink, error: unknown): void {
    if (!this.live.delete(sink)) return;
    safeWarn(
      this.warn,
      `stream sink ${JSON.stringify(sink.kind)} failed and is disabled for the rest of the stream: ${errorText(error)}`,
    );
  }

  private async closeOne(sink: StreamSink): Promise<void> {
    let closing: Promise<void>;
    try {
      closing = Promise.resolve(sink.close()).catch(() => undefined);
    } catch {
      return;
    }
    // A sink that ignores its own bound must not hold the turn: a little slack over 2 s, then move on.
    if (!(await settledWithin(closing, CLOSE_TIMEOUT_MS + 500))) {
      safeWarn(
        this.warn,
        `stream sink ${JSON.stringify(sink.kind)} did not close within ${CLOSE_TIMEOUT_MS} ms`,
      );
    }
  }
}
