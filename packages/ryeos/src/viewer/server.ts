/**
 * `rye threads view`: a small HTTP server on 127.0.0.1 (a random port) for the page in
 * `viewer/` of this package. Every path lives under `/t/<token>/` with a token made at start, so
 * only who was given the printed URL can read a thread; the Host header must name the loopback
 * address (a DNS-rebound name never gets an answer); and cancel/kill exist only with `--control`,
 * as POSTs from the page's own origin. Loaded only by that command.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isRyeError, RyeError } from '@ryeos/lillux';
import { packageRoot } from '../package-root.js';
import { threadDetail, threadTree, transcriptSlice, type ViewerSource } from './data.js';

export interface ViewerOptions {
  source: ViewerSource;
  /** Cancel and kill buttons (and their POST routes); read-only without. */
  control: boolean;
  /** Label shown on the page (the project's folder). */
  title: string;
}

export interface RunningViewer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Scripts, styles and requests of the page's own origin only; nothing inline, nothing framed. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const STATIC: Record<string, { file: string; type: string }> = {
  '': { file: 'index.html', type: 'text/html; charset=utf-8' },
  'app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  'app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** A POST body larger than this is refused (the only bodies are `{thread_id}`). */
const MAX_BODY = 4096;

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'Cross-Origin-Resource-Policy': 'same-origin',
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function sendError(res: ServerResponse, error: unknown): void {
  if (isRyeError(error)) {
    const status =
      error.code === 'NOT_FOUND'
        ? 404
        : error.code === 'VALIDATION'
          ? 400
          : error.code === 'INTEGRITY' || error.code === 'LIMIT'
            ? 422
            : 500;
    sendJson(res, status, {
      status: 'error',
      error: error.message,
      error_type: error.code,
      hint: error.hint,
    });
    return;
  }
  sendJson(res, 500, {
    status: 'error',
    error: `The viewer could not answer: ${(error as Error)?.message ?? String(error)}`,
  });
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(
          new RyeError('VALIDATION', 'Request body too large', { hint: 'Send {"thread_id": "…"} only.' }),
        );
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function threadIdOf(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const id = (parsed as { thread_id?: unknown } | undefined)?.thread_id;
  if (typeof id !== 'string' || id === '') {
    throw new RyeError('VALIDATION', 'The request names no thread', { hint: 'Send {"thread_id": "…"}.' });
  }
  return id;
}

/** Starts the server; resolves once it listens. */
export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  const token = randomBytes(24).toString('base64url');
  const assets = join(packageRoot(), 'viewer');
  const files = new Map(
    Object.entries(STATIC).map(([name, { file, type }]) => [
      name,
      { body: readFileSync(join(assets, file)), type },
    ]),
  );
  let port = 0;
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // DNS rebinding: a page of another site that resolves its name to 127.0.0.1 still sends its own name.
    if (!allowedHosts().has(String(req.headers.host ?? '').toLowerCase())) {
      sendJson(res, 421, { status: 'error', error: 'This viewer answers only to 127.0.0.1 or localhost.' });
      return;
    }
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    const match = /^\/t\/([^/]+)\/(.*)$/.exec(url.pathname);
    if (!match || !sameToken(match[1]!, token)) {
      sendJson(res, 403, {
        status: 'error',
        error: 'Missing or wrong viewer token',
        hint: 'Open the URL rye threads view printed; a new start makes a new token.',
      });
      return;
    }
    const route = match[2]!;
    if (req.method === 'GET' || req.method === 'HEAD') {
      const file = files.get(route);
      if (file) return send(res, 200, file.type, file.body);
      if (route === 'api/config')
        return sendJson(res, 200, { control: options.control, title: options.title });
      if (route === 'api/threads') return sendJson(res, 200, { threads: await threadTree(options.source) });
      const id = url.searchParams.get('id') ?? '';
      if (route === 'api/thread') return sendJson(res, 200, await threadDetail(options.source, id));
      if (route === 'api/transcript') {
        const offset = Number(url.searchParams.get('offset') ?? '0');
        if (!Number.isSafeInteger(offset) || offset < 0) {
          throw new RyeError('VALIDATION', 'offset must be a byte offset (a whole number ≥ 0)');
        }
        return sendJson(res, 200, await transcriptSlice(options.source, id, offset));
      }
    } else if (req.method === 'POST' && (route === 'api/cancel' || route === 'api/kill')) {
      return control(req, res, route === 'api/cancel' ? 'cancel' : 'kill');
    }
    sendJson(res, 404, { status: 'error', error: `Nothing at ${req.method} ${route}` });
  };

  /** Cancel or kill, as `rye threads cancel|kill` do them; only with --control, only from the page. */
  const control = async (req: IncomingMessage, res: ServerResponse, action: 'cancel' | 'kill') => {
    if (!options.control) {
      sendJson(res, 403, {
        status: 'error',
        error: 'This viewer is read-only',
        hint: 'Start it with rye threads view --control to cancel or kill threads from the page.',
      });
      return;
    }
    // A form or script of another origin cannot send this: browsers name the origin of a POST.
    const origin = String(req.headers.origin ?? '');
    if (!new Set([...allowedHosts()].map((host) => `http://${host}`)).has(origin.toLowerCase())) {
      sendJson(res, 403, {
        status: 'error',
        error: 'Cancel and kill are taken only from the viewer page itself',
      });
      return;
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      sendJson(res, 415, { status: 'error', error: 'Send the thread id as JSON' });
      return;
    }
    const id = threadIdOf(await readBody(req));
    const { cancelThread, killThread } = await import('@ryeos/threads');
    const store = options.source.store ? { store: options.source.store } : {};
    const { projectPath } = options.source;
    const result =
      action === 'cancel'
        ? await cancelThread(projectPath, id, store)
        : await killThread(projectPath, id, store);
    sendJson(res, result.success ? 200 : 409, { status: result.success ? 'success' : 'error', ...result });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error) => sendError(res, error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/t/${token}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
