import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

// The SDK transports are imported lazily (inside the functions below) so that importing
// `@ryeos/mcp` for its tool definitions does not load them.

export interface StdioServerHandle {
  close(): Promise<void>;
  /** Settles when the server has closed (e.g. the client closed stdin). */
  closed: Promise<void>;
}

const STDOUT_CONSOLE_METHODS = ['log', 'info', 'debug'] as const;

/**
 * Serves `server` over stdin/stdout. stdout then carries JSON-RPC only: while it is served,
 * `console.log`, `console.info` and `console.debug` write to stderr like `console.error`. The
 * server closes itself when stdin ends.
 */
export interface StdioServeOptions {
  /** Largest JSON-RPC message accepted, in bytes; default 4 MiB (as over HTTP). */
  maxMessageBytes?: number;
}

export async function serveStdio(
  server: Server,
  options: StdioServeOptions = {},
): Promise<StdioServerHandle> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const limit = options.maxMessageBytes ?? MAX_BODY_BYTES;
  // An oversized line never reaches the SDK (an 11 MB line used to end the server): it is
  // dropped as it streams in and answered with a JSON-RPC error, and the server lives on.
  const input = new LineLimiter(limit, (head) => {
    const reply = {
      jsonrpc: '2.0',
      id: requestIdOf(head),
      error: { code: -32600, message: `Request too large: the limit is ${limit} bytes` },
    };
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  });
  process.stdin.pipe(input);
  const transport = new StdioServerTransport(input, process.stdout);
  const saved = STDOUT_CONSOLE_METHODS.map((method) => [method, console[method]] as const);
  const onEnd = (): void => void close().catch(() => {});
  // Set before connect: the Server chains its own close handler onto this one.
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  transport.onclose = () => {
    markClosed();
    process.stdin.unpipe(input);
    process.stdin.off('end', onEnd);
    for (const [method, original] of saved) {
      if (console[method] === console.error) console[method] = original;
    }
  };
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= server.close();
    return closing;
  };
  await server.connect(transport);
  for (const method of STDOUT_CONSOLE_METHODS) console[method] = console.error;
  process.stdin.once('end', onEnd);
  return { close, closed };
}

export interface HttpServeOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. A non-loopback host also needs `allowRemote`. */
  host?: string;
  /** Permit binding a non-loopback interface (the Host/Origin check is then off). */
  allowRemote?: boolean;
  /**
   * Bearer token every request must carry (`Authorization: Bearer <token>`); absent: no
   * authentication. Any local account can reach 127.0.0.1, so servers should set one.
   */
  token?: string;
  /** Sessions idle this long are closed; default 30 minutes. */
  sessionIdleMs?: number;
  /**
   * At most this many sessions; at the cap a new one replaces the least recently used idle
   * session, and is refused with 503 while every session is in use. Default 64.
   */
  maxSessions?: number;
  /**
   * A session is in use while a request of it is open and for this long after its last request
   * or message; an open GET stream alone does not keep it in use past that. Default 5 minutes.
   */
  sessionInUseMs?: number;
  /**
   * At most this many bytes of request bodies are held at once, over all requests; a body that
   * would go past it is refused with 503. Default 32 MiB.
   */
  maxBodyBytesInFlight?: number;
  /** A request body not received in full within this time is refused with 408. Default 30 s. */
  bodyTimeoutMs?: number;
  /** Log failed HTTP requests to stderr (the entry point's RYE_DEBUG). */
  debug?: boolean;
}

export interface HttpServerHandle {
  /** The MCP endpoint, e.g. `http://127.0.0.1:4321/mcp`. */
  url: string;
  port: number;
  /** Open sessions (bounded by `maxSessions`, pruned after `sessionIdleMs`). */
  sessionCount(): number;
  /** Closes every session, then the listener. */
  close(): Promise<void>;
}

const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 64;
const DEFAULT_SESSION_IN_USE_MS = 5 * 60 * 1000;
const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 32 * 1024 * 1024;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/**
 * The one loopback rule (DECISIONS 31), for both binding and the Host/Origin check: `localhost`,
 * `::1` and all of 127.0.0.0/8.
 */
export function isLoopbackHost(host: string): boolean {
  const bracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  // An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is the IPv4 address it maps.
  const bare = bracketed.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  if (bare === 'localhost' || bare === '::1') return true;
  // The same in hex, as URL parsing writes it (`[::ffff:7f00:1]`): 127.0.0.0/8 is 7fxx:xxxx.
  if (/^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(bare)) return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare);
  return octets?.slice(1).every((octet) => Number(octet) <= 255) ?? false;
}

/**
 * Where a server binds without `allowRemote`: the usual loopback names only. Another 127.x
 * alias may be routed differently (e.g. published from a container), so it must be asked for;
 * it still counts as loopback for the Host/Origin check, as every loopback bind does.
 */
export function isDefaultBindHost(host: string): boolean {
  return ['127.0.0.1', '::1', '[::1]', 'localhost'].includes(host);
}

/** Compares a presented bearer token with the expected one in constant time. */
function tokenMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(presented), digest(token)) && presented.length > 0;
}

/** The `id` of a JSON-RPC request from the start of its text, when it can be read there. */
function requestIdOf(head: string): string | number | null {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(head);
  if (!match) return null;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return null;
  }
}

/**
 * Passes stdin on line by line and drops any line longer than `limit` as it streams in (keeping
 * at most `limit` bytes in memory), reporting its first bytes to `onOversize`.
 */
class LineLimiter extends Transform {
  private line: Buffer[] = [];
  private size = 0;
  private dropping = false;
  private head = '';

  constructor(
    private readonly limit: number,
    private readonly onOversize: (head: string) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      this.accept(chunk.subarray(start, end), newline !== -1);
      start = end;
    }
    done();
  }

  private accept(piece: Buffer, complete: boolean): void {
    if (!this.dropping) {
      if (this.size + piece.length > this.limit + 1) {
        this.head = Buffer.concat([...this.line, piece])
          .subarray(0, 1024)
          .toString('utf8');
        this.line = [];
        this.size = 0;
        this.dropping = true;
      } else {
        this.line.push(piece);
        this.size += piece.length;
      }
    }
    if (!complete) return;
    if (this.dropping) {
      this.dropping = false;
      this.onOversize(this.head);
    } else this.push(Buffer.concat(this.line));
    this.line = [];
    this.size = 0;
  }
}

function sendJsonRpcError(res: ServerResponse, httpStatus: number, code: number, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(httpStatus, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

class BodyError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** The bytes of request bodies being buffered, over all requests: what a token holder can pin. */
class BodyBudget {
  #used = 0;
  constructor(readonly limit: number) {}
  take(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }
  give(bytes: number): void {
    this.#used -= bytes;
  }
}

async function readJsonBody(req: IncomingMessage, budget: BodyBudget): Promise<unknown> {
  const chunks: Buffer[] = [];
  let held = 0;
  try {
    for await (const chunk of req) {
      const bytes = (chunk as Buffer).length;
      if (held + bytes > MAX_BODY_BYTES) throw new BodyError(413, -32000, 'Request body too large');
      if (!budget.take(bytes)) {
        throw new BodyError(
          503,
          -32000,
          'Service unavailable: too many request bodies in flight; retry later',
          1,
        );
      }
      held += bytes;
      chunks.push(chunk as Buffer);
    }
  } finally {
    budget.give(held);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BodyError(400, -32700, 'Parse error: invalid JSON');
  }
}

function isInitialize(body: unknown): boolean {
  const isInit = (m: unknown) =>
    typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
  return Array.isArray(body) ? body.some(isInit) : isInit(body);
}

function hostnameOf(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return '';
  }
}

/**
 * Guards against DNS rebinding when bound to loopback: a web page may reach 127.0.0.1, but its
 * requests carry a foreign Host (after rebinding) or Origin header.
 */
function isAllowedLocalRequest(req: IncomingMessage): boolean {
  if (!isLoopbackHost(hostnameOf(req.headers.host ?? ''))) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true; // not a browser
  try {
    return isLoopbackHost(new URL(origin).hostname);
  } catch {
    return false;
  }
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** The last request, response or message of this session. */
  lastSeen: number;
  /** Requests of this session still being answered (a GET stream is not one). */
  open: number;
}

/** Quiet since `since`: no request being answered, nothing sent or received after it. */
function isQuiet(session: Session, since: number): boolean {
  return session.open === 0 && session.lastSeen <= since;
}

/** A message the server sends (a notification on the GET stream included) marks the session seen. */
function watchMessages(session: Session): void {
  const send = session.transport.send.bind(session.transport);
  session.transport.send = (message, options) => {
    session.lastSeen = Date.now();
    return send(message, options);
  };
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`, with stateful sessions: each `initialize` gets its own
 * transport and its own `Server` from `createServer()`, addressed by the `mcp-session-id` header.
 * Binds to 127.0.0.1 unless `host` says otherwise.
 */
export async function serveHttp(
  createServer: () => Server,
  options: HttpServeOptions = {},
): Promise<HttpServerHandle> {
  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  const host = options.host ?? '127.0.0.1';
  const loopbackOnly = isLoopbackHost(host);
  if (!isDefaultBindHost(host) && !options.allowRemote) {
    throw new Error(
      `Refusing to serve MCP on ${host}: only 127.0.0.1, ::1 and localhost are bound without allowRemote. Bind to 127.0.0.1, or allow it explicitly (and keep authentication on).`,
    );
  }
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const inUseMs = options.sessionInUseMs ?? DEFAULT_SESSION_IN_USE_MS;
  const bodyBudget = new BodyBudget(options.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  // Map order is use order: a session is re-inserted on every request, so the first is the LRU.
  const sessions = new Map<string, Session>();
  const pending = new Set<Session>();
  const closeSession = (id: string, session: Session): void => {
    sessions.delete(id);
    session.server.close().catch(() => {});
  };
  const sweeper = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const [id, session] of sessions) if (isQuiet(session, cutoff)) closeSession(id, session);
    },
    Math.max(1_000, Math.min(idleMs / 2, 60_000)),
  );
  sweeper.unref();

  /**
   * Makes room for one more session by closing the least recently used idle one. Only an idle
   * session may go: closing one in use would let any token holder log the other clients out. An
   * open GET stream that carried nothing for `inUseMs` is idle: otherwise a token holder parking
   * one stream per session would refuse every other client for as long as it likes.
   */
  const makeRoom = (): boolean => {
    if (sessions.size + pending.size < maxSessions) return true;
    const quietSince = Date.now() - inUseMs;
    for (const [id, session] of sessions) {
      if (isQuiet(session, quietSince)) {
        closeSession(id, session);
        return true;
      }
    }
    return false;
  };

  /**
   * Counts a request's `res` as open on `session` until it is answered or its connection drops; a
   * GET stream only marks the session seen (its messages do too, see `watchMessages`).
   */
  const track = (session: Session, req: IncomingMessage, res: ServerResponse): void => {
    session.lastSeen = Date.now();
    if (req.method === 'GET') {
      res.once('close', () => {
        session.lastSeen = Date.now();
      });
      return;
    }
    session.open++;
    res.once('close', () => {
      session.open--;
      session.lastSeen = Date.now();
    });
  };

  async function startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (!makeRoom()) {
      res.setHeader('Retry-After', String(Math.ceil(inUseMs / 1000)));
      return sendJsonRpcError(
        res,
        503,
        -32000,
        `Service unavailable: all ${maxSessions} sessions are in use; retry later, or close a session you no longer need (DELETE /mcp with its mcp-session-id)`,
      );
    }
    const server = createServer();
    const session: Session = {
      open: 0,
      lastSeen: Date.now(),
      server,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.set(id, session);
          pending.delete(session);
        },
      }),
    };
    watchMessages(session);
    pending.add(session);
    track(session, req, res);
    // Set before connect: the Server chains its own close handler onto this one.
    session.transport.onclose = () => {
      pending.delete(session);
      const id = session.transport.sessionId;
      if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
    };
    await server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
    // An initialize that failed (bad protocol version, malformed params) leaves no session.
    if (session.transport.sessionId === undefined) await server.close();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_PATH) return sendJsonRpcError(res, 404, -32000, `Not found: use ${MCP_PATH}`);
    if (loopbackOnly && !isAllowedLocalRequest(req)) {
      return sendJsonRpcError(res, 403, -32000, 'Forbidden: Host or Origin is not local');
    }
    if (options.token !== undefined && !tokenMatches(req.headers.authorization, options.token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="ryeos-mcp"');
      return sendJsonRpcError(
        res,
        401,
        -32001,
        'Unauthorized: send Authorization: Bearer <token> (see the server start-up message)',
      );
    }

    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    let body: unknown;
    if (req.method === 'POST') body = await readJsonBody(req, bodyBudget);

    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      // MCP: an unknown or terminated session is 404, so the client starts a new one.
      if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      track(session, req, res);
      sessions.delete(sessionId);
      sessions.set(sessionId, session);
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitialize(body)) return startSession(req, res, body);
    return sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  // Node's default request timeout is 300 s: far too long to let a connection hold a body open.
  // It covers receiving the request only, so an open GET stream is not cut by it.
  const httpServer = createHttpServer(
    {
      requestTimeout: bodyTimeoutMs,
      headersTimeout: Math.min(bodyTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.max(50, Math.min(bodyTimeoutMs / 4, 30_000)),
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (error instanceof BodyError) {
          // The rest of the body is not wanted: close the connection rather than read it.
          if (!res.headersSent) res.setHeader('Connection', 'close');
          if (error.retryAfterSeconds !== undefined && !res.headersSent)
            res.setHeader('Retry-After', String(error.retryAfterSeconds));
          return sendJsonRpcError(res, error.httpStatus, error.code, error.message);
        }
        if (options.debug) console.error('[rye mcp] HTTP request failed:', error);
        sendJsonRpcError(res, 500, -32603, 'Internal server error');
      });
    },
  );
  // TCP keepalive closes the stream of a client that vanished (a laptop put to sleep).
  httpServer.on('connection', (socket) => socket.setKeepAlive(true, 60_000));

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });

  const { port } = httpServer.address() as AddressInfo;
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${urlHost}:${port}${MCP_PATH}`,
    port,
    sessionCount: () => sessions.size,
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        const all = [...sessions.values(), ...pending];
        sessions.clear();
        pending.clear();
        await Promise.allSettled(all.map((session) => session.server.close()));
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          httpServer.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
