import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

// The SDK transports are imported lazily (inside the functions below) so that importing
// `@ryeos/mcp` for its tool definitions does not load them.

export interface StdioServerHandle {
  close(): Promise<void>;
}

const STDOUT_CONSOLE_METHODS = ['log', 'info', 'debug'] as const;

/**
 * Serves `server` over stdin/stdout. stdout then carries JSON-RPC only: while it is served,
 * `console.log`, `console.info` and `console.debug` write to stderr like `console.error`. The
 * server closes itself when stdin ends.
 */
export async function serveStdio(server: Server): Promise<StdioServerHandle> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport();
  const saved = STDOUT_CONSOLE_METHODS.map((method) => [method, console[method]] as const);
  const onEnd = (): void => void close().catch(() => {});
  // Set before connect: the Server chains its own close handler onto this one.
  transport.onclose = () => {
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
  return { close };
}

export interface HttpServeOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
}

export interface HttpServerHandle {
  /** The MCP endpoint, e.g. `http://127.0.0.1:4321/mcp`. */
  url: string;
  port: number;
  /** Closes every session, then the listener. */
  close(): Promise<void>;
}

const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

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
  ) {
    super(message);
  }
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyError(413, -32000, 'Request body too large');
    chunks.push(chunk as Buffer);
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
  if (!LOOPBACK_HOSTS.has(hostnameOf(req.headers.host ?? ''))) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true; // not a browser
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
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
  const loopbackOnly = LOOPBACK_HOSTS.has(host);
  const sessions = new Map<string, Session>();
  const pending = new Set<Session>();

  async function startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = createServer();
    const session: Session = {
      server,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.set(id, session);
          pending.delete(session);
        },
      }),
    };
    pending.add(session);
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

    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    let body: unknown;
    if (req.method === 'POST') body = await readJsonBody(req);

    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      // MCP: an unknown or terminated session is 404, so the client starts a new one.
      if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitialize(body)) return startSession(req, res, body);
    return sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  const httpServer = createHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof BodyError)
        return sendJsonRpcError(res, error.httpStatus, error.code, error.message);
      if (process.env['RYE_DEBUG']) console.error('[rye mcp] HTTP request failed:', error);
      sendJsonRpcError(res, 500, -32603, 'Internal server error');
    });
  });

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
    close() {
      closing ??= (async () => {
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
