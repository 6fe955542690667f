/**
 * The provider replay server: plays a script's turns over real HTTP on 127.0.0.1, in the Anthropic
 * (`POST /v1/messages`) and OpenAI (`POST /v1/chat/completions`) wire formats, and records every
 * request. Each request takes the next turn, whatever its format.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { RyeError } from '@ryeos/lillux';
import { anthropicError, anthropicMessage, anthropicStream, anthropicStreamError } from './anthropic-wire.js';
import { openaiCompletion, openaiError, openaiStream, openaiStreamError } from './openai-wire.js';
import { type ErrorReply, planTurn, type StreamPlan } from './plan.js';
import { type ReplayHttpError, type ReplayScript, validateReplayScript } from './script.js';

export type ReplayFormat = 'anthropic' | 'openai';

export interface RecordedRequest {
  format: ReplayFormat;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The parsed JSON body (`undefined` when it was not JSON). */
  body: unknown;
  /** Epoch ms. */
  receivedAt: number;
  /** Epoch ms at which a streamed answer's final event was sent (unset until then, or when none was). */
  finalSentAt?: number;
}

export interface ReplayServer {
  /** `http://127.0.0.1:PORT`: use it as `ANTHROPIC_BASE_URL`, and `${url}/v1` as `OPENAI_BASE_URL`. */
  readonly url: string;
  readonly port: number;
  /** Every request to the two endpoints, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Stops listening and cuts open connections. */
  close(): Promise<void>;
}

export interface ReplayServerOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Only loopback is served. */
  host?: '127.0.0.1';
  /** Called after each request is recorded (the CLI logs with it). */
  onRequest?: (request: RecordedRequest, turn: number | undefined) => void;
}

const ROUTES: Record<string, ReplayFormat> = {
  '/v1/messages': 'anthropic',
  '/v1/chat/completions': 'openai',
};

interface Wire {
  stream: (plan: ReturnType<typeof planTurn>, body: unknown) => StreamPlan;
  whole: (plan: ReturnType<typeof planTurn>, body: unknown) => Record<string, unknown>;
  streamError: typeof anthropicStreamError;
  error: (error: ReplayHttpError, requestId: string) => ErrorReply;
  idPrefix: 'toolu' | 'call';
  requestIdHeader: string;
  /** The HTTP status of a `stream_error` turn answered without streaming. */
  streamErrorStatus: number;
}

const WIRES: Record<ReplayFormat, Wire> = {
  anthropic: {
    stream: anthropicStream,
    whole: anthropicMessage,
    streamError: anthropicStreamError,
    error: anthropicError,
    idPrefix: 'toolu',
    requestIdHeader: 'request-id',
    streamErrorStatus: 529,
  },
  openai: {
    stream: openaiStream,
    whole: openaiCompletion,
    streamError: openaiStreamError,
    error: openaiError,
    idPrefix: 'call',
    requestIdHeader: 'x-request-id',
    streamErrorStatus: 500,
  },
};

function headerRecord(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function sendJson(res: ServerResponse, reply: ErrorReply): void {
  if (res.destroyed) return;
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(JSON.stringify(reply.body));
}

/** A running server's state, shared by the functions that answer its requests. */
interface Replay {
  readonly script: ReplayScript;
  readonly options: ReplayServerOptions;
  readonly requests: RecordedRequest[];
  /** Wakes every pause at once (on close). */
  readonly pending: Set<() => void>;
  /** The next turn to play. */
  next: number;
  closed: boolean;
}

/** Resolves after `ms`, or at once when the server closes. */
function pause(replay: Replay, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const wake = (): void => {
      clearTimeout(timer);
      replay.pending.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    replay.pending.add(wake);
  });
}

function write(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(data, () => resolve());
  });
}

/** One turn, written as SSE frames with the turn's timing, error event or cut connection. */
async function streamTurn(
  replay: Replay,
  res: ServerResponse,
  wire: Wire,
  plan: ReturnType<typeof planTurn>,
  body: unknown,
  requestId: string,
  recorded: RecordedRequest,
): Promise<void> {
  const { frames, closingAt } = wire.stream(plan, body);
  const { turn } = plan;
  let stopAt = frames.length;
  let tail: string | undefined;
  if (turn.stream_error) {
    stopAt = Math.min(turn.stream_error.after_events ?? closingAt, frames.length);
    tail = wire.streamError(turn.stream_error);
  }
  if (turn.disconnect_after_events !== undefined)
    stopAt = Math.min(turn.disconnect_after_events, frames.length);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    [wire.requestIdHeader]: requestId,
  });
  res.flushHeaders();
  for (let i = 0; i < stopAt; i++) {
    if (i > 0) await pause(replay, plan.chunkDelayMs);
    if (i === frames.length - 1) await pause(replay, plan.holdBeforeFinalMs);
    if (replay.closed || res.destroyed) return;
    if (i === frames.length - 1) recorded.finalSentAt = Date.now();
    await write(res, frames[i]!);
  }
  if (turn.disconnect_after_events !== undefined) {
    // Cut the connection without the chunked terminator: the client sees a broken stream.
    res.socket?.destroy();
    return;
  }
  if (tail !== undefined) {
    if (stopAt > 0) await pause(replay, plan.chunkDelayMs);
    await write(res, tail);
  }
  res.end();
}

/** One turn answered without streaming: its error, its message, or half a body and a cut. */
async function answerWhole(
  res: ServerResponse,
  wire: Wire,
  plan: ReturnType<typeof planTurn>,
  body: unknown,
  requestId: string,
): Promise<void> {
  const { turn } = plan;
  if (turn.stream_error) {
    // Without a stream the same failure can only be an HTTP error.
    const { type, message } = turn.stream_error;
    const error: ReplayHttpError = { status: wire.streamErrorStatus };
    if (type !== undefined) error.type = type;
    if (message !== undefined) error.message = message;
    sendJson(res, wire.error(error, requestId));
  } else if (turn.disconnect_after_events !== undefined) {
    // Without a stream: headers and half the body, then the connection is cut.
    const text = JSON.stringify(wire.whole(plan, body));
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      [wire.requestIdHeader]: requestId,
    });
    await write(res, text.slice(0, Math.floor(text.length / 2)));
    res.socket?.destroy();
  } else {
    sendJson(res, {
      status: 200,
      headers: { [wire.requestIdHeader]: requestId },
      body: wire.whole(plan, body),
    });
  }
}

function notFound(res: ServerResponse, method: string | undefined, path: string): void {
  sendJson(res, {
    status: 404,
    headers: {},
    body: {
      error: {
        type: 'not_found_error',
        message: `The replay server serves POST /v1/messages (Anthropic) and POST /v1/chat/completions (OpenAI), not ${method} ${path}`,
      },
    },
  });
}

/** The turns a conversation already had: its assistant messages (both wire formats name them so). */
function conversationTurn(body: unknown): number {
  const messages = (body as { messages?: unknown }).messages;
  return Array.isArray(messages)
    ? messages.filter((message) => (message as { role?: unknown } | null)?.role === 'assistant').length
    : 0;
}

/** The index of the turn this request plays (see `per_conversation`). */
function turnIndex(replay: Replay, body: unknown): number {
  return replay.script.per_conversation ? conversationTurn(body) : replay.next;
}

/** The error of a request the script cannot answer (not a JSON object, or past its last turn). */
function refusal(replay: Replay, format: ReplayFormat, body: unknown): ReplayHttpError | undefined {
  if (body === undefined || typeof body !== 'object' || body === null) {
    return { status: 400, message: 'The request body is not a JSON object', type: 'invalid_request_error' };
  }
  if (turnIndex(replay, body) < replay.script.turns.length) return undefined;
  const count = replay.requests.length;
  return {
    status: 500,
    type: format === 'anthropic' ? 'api_error' : 'server_error',
    message: `Replay script exhausted: this is request ${count}, but the script has only ${replay.script.turns.length} turn(s). Add turns to the script, or look for an unexpected extra request (a retry?).`,
  };
}

async function handle(replay: Replay, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  const format = ROUTES[path];
  if (format === undefined || req.method !== 'POST') return notFound(res, req.method, path);
  const wire = WIRES[format];
  const text = await readBody(req);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const recorded: RecordedRequest = {
    format,
    path,
    headers: headerRecord(req),
    body,
    receivedAt: Date.now(),
  };
  replay.requests.push(recorded);
  const requestId = `req_replay_${replay.requests.length}`;
  const refused = refusal(replay, format, body);
  if (refused) {
    replay.options.onRequest?.(recorded, undefined);
    sendJson(res, wire.error(refused, requestId));
    return;
  }
  const index = turnIndex(replay, body);
  replay.next++;
  replay.options.onRequest?.(recorded, index + 1);
  const plan = planTurn(replay.script, index, body, wire.idPrefix);
  await pause(replay, plan.delayMs);
  if (replay.closed || res.destroyed) return;
  if (plan.turn.error) sendJson(res, wire.error(plan.turn.error, requestId));
  else if ((body as { stream?: unknown }).stream === true)
    await streamTurn(replay, res, wire, plan, body, requestId, recorded);
  else await answerWhole(res, wire, plan, body, requestId);
}

export async function startReplayServer(
  script: ReplayScript,
  options: ReplayServerOptions = {},
): Promise<ReplayServer> {
  validateReplayScript(script);
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') {
    throw new RyeError('VALIDATION', `The replay server only listens on 127.0.0.1, not ${String(host)}`, {
      hint: 'Leave host out; the server is for local tests.',
    });
  }
  const replay: Replay = { script, options, requests: [], pending: new Set(), next: 0, closed: false };
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    handle(replay, req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, {
        status: 500,
        headers: {},
        body: { error: { type: 'api_error', message: `Replay server failure: ${(error as Error).message}` } },
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests: replay.requests,
    close: async () => {
      if (replay.closed) return;
      replay.closed = true;
      for (const wake of [...replay.pending]) wake();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
