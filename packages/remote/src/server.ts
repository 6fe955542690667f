/**
 * The `ryeos-remote` HTTP server on `node:http`: routes, bearer-key authentication, and start
 * and stop. It binds 127.0.0.1 unless told otherwise; another interface must be allowed on
 * purpose, since TLS has to be terminated in front of it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RyeError } from '@ryeos/lillux';
import { isDefaultBindHost } from '@ryeos/mcp';
import type {
  RemoteHealthResponse as HealthResponse,
  RemotePublicKeyResponse as PublicKeyResponse,
} from 'ryeos';
import { API_KEY_PREFIX, packageVersion } from 'ryeos';
import {
  DEFAULT_INFLIGHT_BODIES,
  DEFAULT_MAX_BODY_SECONDS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  ensurePrivateDirs,
  type RemoteLimits,
  type RemotePaths,
  removeLeftoverRuns,
} from './config.js';
import { type RunConfinement, runConfinement } from './confine.js';
import { ConnectionCap } from './connection-cap.js';
import type { Caller, ServerContext } from './context.js';
import { failInterruptedThreads, openRemoteDb, userOfApiKey } from './db.js';
import { executeRemote } from './execute.js';
import { errorAnswer, httpError, Reply, readJsonObject, sendJson } from './http.js';
import { loadServerIdentity } from './identity.js';
import { InflightBytes } from './inflight-bytes.js';
import { getObjects, hasObjects, pushProject, putObjects } from './objects.js';
import { runPathOf } from './run.js';
import { DEFAULT_RUN_POOL, RunPool } from './run-pool.js';
import { startRunWorker } from './run-process.js';
import { RunSlots } from './run-slots.js';
import { lockDataDir } from './serve-lock.js';
import { listThreads, showThread } from './threads.js';
import { majorMinor } from './version.js';

export interface RemoteServerOptions {
  paths: RemotePaths;
  limits: RemoteLimits;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  remoteName?: string;
  /** Needed to bind anything but 127.0.0.1, ::1 or localhost. */
  allowRemote?: boolean;
  /** Executions at once; more wait their turn (default 4). */
  maxConcurrentRuns?: number;
  /**
   * Serve even where Landlock is unavailable, every run's tools then having this server
   * account's rights. Without it such a server refuses to start.
   */
  unconfinedRuns?: boolean;
  /**
   * The server's environment, of which a run inherits only PATH and LANG. The entry point
   * passes `process.env` (nothing below it reads the process's); absent, runs inherit nothing.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface RunningRemoteServer {
  url: string;
  host: string;
  port: number;
  fingerprint: string;
  /** Whether runs' tool processes are confined (false only with `unconfinedRuns` where Landlock is missing). */
  confined: boolean;
  close(): Promise<void>;
}

/** How long a stopping server lets running requests finish. */
const CLOSE_GRACE_MS = 10_000;

type Handler = (req: IncomingMessage, res: ServerResponse, ctx: ServerContext, url: URL) => Promise<void>;

function authenticate(ctx: ServerContext, req: IncomingMessage): Caller {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const user = presented?.startsWith(API_KEY_PREFIX) ? userOfApiKey(ctx.db, presented) : undefined;
  if (!user) {
    throw httpError(
      401,
      'PERMISSION',
      presented ? 'The API key is not valid (unknown, revoked or expired)' : 'An API key is required',
      'Send "Authorization: Bearer rye_sk_…" with a key from: ryeos-remote keys create --user NAME',
    );
  }
  return { user };
}

/** A JSON endpoint behind authentication: the key is checked before the body is read. */
function authed(
  handle: (
    ctx: ServerContext,
    caller: Caller,
    body: Record<string, unknown>,
    cancelled: AbortSignal,
  ) => unknown | Promise<unknown>,
): Handler {
  return async (req, res, ctx) => {
    const caller = authenticate(ctx, req);
    const body = await readJsonObject(req, ctx.limits.maxRequestBytes, ctx.inflight);
    // The client gone before its answer (aborted, connection closed): what it asked for stops.
    const cancelled = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) cancelled.abort();
    });
    const answer = await handle(ctx, caller, body, cancelled.signal);
    const reply = answer instanceof Reply ? answer : new Reply(200, answer);
    await sendJson(req, res, reply.status, reply.body);
  };
}

const ROUTES: Record<string, Record<string, Handler>> = {
  '/health': {
    GET: async (req, res, ctx) => {
      const body: HealthResponse = {
        status: 'ok',
        version: ctx.version,
        system_version: ctx.systemVersion,
        remote_name: ctx.remoteName,
      };
      await sendJson(req, res, 200, body);
    },
  },
  '/public-key': {
    GET: async (req, res, ctx) => {
      const body: PublicKeyResponse = {
        public_key_pem: ctx.identity.publicKeyPem,
        fingerprint: ctx.identity.fingerprint,
      };
      await sendJson(req, res, 200, body);
    },
  },
  '/objects/has': { POST: authed(hasObjects) },
  '/objects/put': { POST: authed(putObjects) },
  '/objects/get': { POST: authed(getObjects) },
  '/push': { POST: authed(pushProject) },
  '/execute': { POST: authed(executeRemote) },
  '/threads': {
    GET: async (req, res, ctx, url) => {
      await sendJson(req, res, 200, listThreads(ctx, authenticate(ctx, req), url.searchParams));
    },
  },
};

async function route(req: IncomingMessage, res: ServerResponse, ctx: ServerContext): Promise<void> {
  const refused = ctx.connections.refusal(req.socket);
  if (refused) throw refused;
  const url = new URL(req.url ?? '/', 'http://server');
  const thread = /^\/threads\/([^/]+)$/.exec(url.pathname);
  if (thread && req.method === 'GET') {
    const caller = authenticate(ctx, req);
    await sendJson(req, res, 200, showThread(ctx, caller, thread[1]!));
    return;
  }
  const methods = Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname] : undefined;
  const handler = methods && Object.hasOwn(methods, req.method ?? '') ? methods[req.method!] : undefined;
  if (!handler) {
    throw methods
      ? httpError(
          405,
          'VALIDATION',
          `${req.method} is not allowed on ${url.pathname}`,
          `Use ${Object.keys(methods).join(' or ')}.`,
        )
      : httpError(
          404,
          'NOT_FOUND',
          `No endpoint ${url.pathname.slice(0, 100)}`,
          'See the README of @ryeos/remote for the endpoints.',
        );
  }
  await handler(req, res, ctx, url);
}

async function answer(req: IncomingMessage, res: ServerResponse, ctx: ServerContext): Promise<void> {
  try {
    await route(req, res, ctx);
  } catch (error) {
    const { status, body, retryAfterSeconds } = errorAnswer(error);
    if (status === 500)
      process.stderr.write(`ryeos-remote: ${req.method} ${req.url}: ${(error as Error)?.stack ?? error}\n`);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // A body left unread (over the limit, or refused before it was read) is not read on:
    // the connection closes once the answer is out.
    if (!req.readableEnded) {
      res.setHeader('connection', 'close');
      res.once('finish', () => req.socket.destroy());
    }
    if (retryAfterSeconds !== undefined) res.setHeader('retry-after', String(retryAfterSeconds));
    await sendJson(req, res, status, body);
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new RyeError('UNAVAILABLE', `Port ${port} on ${host} is already in use`, {
              hint: 'Pick another port with --port (0 picks a free one), or stop what uses it.',
            })
          : error,
      );
    };
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      // Once listening, a failure to accept a connection is logged, not fatal.
      server.on('error', (error) => process.stderr.write(`ryeos-remote: ${error.message}\n`));
      resolve();
    });
  });
}

export async function startRemoteServer(options: RemoteServerOptions): Promise<RunningRemoteServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isDefaultBindHost(host) && !options.allowRemote) {
    throw new RyeError(
      'PERMISSION',
      `Refusing to listen on ${host}: only 127.0.0.1, ::1 and localhost are bound without --allow-remote`,
      {
        hint: 'Bind to 127.0.0.1 (default), or pass --allow-remote with TLS terminated in front of the server.',
      },
    );
  }
  const serverEnv = options.env ?? {};
  const confinement = runConfinement({
    ...(options.unconfinedRuns ? { unconfinedRuns: true } : {}),
    ...(serverEnv.PATH !== undefined ? { path: serverEnv.PATH } : {}),
  });
  ensurePrivateDirs(options.paths);
  const unlock = lockDataDir(options.paths.dataDir);
  try {
    return await serveLocked(options, host, unlock, confinement);
  } catch (error) {
    unlock();
    throw error;
  }
}

async function serveLocked(
  options: RemoteServerOptions,
  host: string,
  unlock: () => void,
  confinement: RunConfinement | undefined,
): Promise<RunningRemoteServer> {
  const identity = await loadServerIdentity(options.paths.signingKeyDir);
  const db = openRemoteDb(options.paths.dbPath);
  // What a stopped server left: rows that say running, and the temp spaces of those runs.
  failInterruptedThreads(db);
  removeLeftoverRuns(options.paths.runsDir, confinement?.python);
  const version = packageVersion();
  const runSlots = options.maxConcurrentRuns ?? 4;
  const stopping = new AbortController();
  const serverEnv = options.env ?? {};
  const pool = new RunPool(
    options.limits.runPool ?? DEFAULT_RUN_POOL,
    () =>
      startRunWorker({
        runsDir: options.paths.runsDir,
        keyDir: identity.dir,
        confinement,
        path: runPathOf({ confinement, serverEnv }),
      }),
    confinement?.python,
  );
  const ctx: ServerContext = {
    db,
    paths: options.paths,
    limits: options.limits,
    identity,
    remoteName: options.remoteName ?? 'default',
    version,
    systemVersion: majorMinor(version),
    runs: new RunSlots(runSlots, options.limits.maxRunsPerUser ?? Math.max(1, Math.floor(runSlots / 2))),
    connections: new ConnectionCap(
      options.limits.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    ),
    inflight: new InflightBytes(
      options.limits.maxInflightBytes ?? DEFAULT_INFLIGHT_BODIES * options.limits.maxRequestBytes,
    ),
    pool,
    confinement,
    serverEnv,
    stopping: stopping.signal,
  };
  const bodySeconds = options.limits.maxBodySeconds ?? DEFAULT_MAX_BODY_SECONDS;
  // Node's default gives a request 300 s to arrive; a body held open that long holds its bytes.
  // The timeout covers receiving the request only, so a long run's answer is not cut by it.
  const server: Server = createServer(
    {
      requestTimeout: bodySeconds * 1000,
      headersTimeout: Math.min(bodySeconds, 30) * 1000,
      connectionsCheckingInterval: Math.min(bodySeconds * 250, 5_000),
    },
    (req, res) => void answer(req, res, ctx),
  );
  ctx.connections.watch(server);
  try {
    await listen(server, options.port ?? 8321, host);
  } catch (error) {
    db.close();
    throw error;
  }
  pool.fill();
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    host,
    port,
    fingerprint: identity.fingerprint,
    confined: confinement !== undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          // The spare workers go with their folders before the data dir is let go.
          void pool.close().finally(() => {
            db.close();
            unlock();
            resolve();
          });
        });
        // Runs in flight are stopped and answered (their rows and records stay consistent); idle
        // keep-alive connections go at once, and anything still open after the grace period is cut.
        stopping.abort();
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
      }),
  };
}
