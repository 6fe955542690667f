/**
 * The HTTP client of one remote, on Node's `fetch`: the bearer key on every call but `/health`
 * and `/public-key`, request bodies gzip-encoded above a small size, timeouts, and every failure
 * (unreachable, timed out, an error answer) turned into a RyeError with the server's hint.
 */
import { gzipSync } from 'node:zlib';
import type { RyeErrorCode } from '@ryeos/lillux';
import { ERROR_CODES, RyeError } from '@ryeos/lillux';
import type { ResolvedRemote } from './config.js';
import type {
  ExecuteRequest,
  ExecuteResponse,
  GetResponse,
  HasResponse,
  HealthResponse,
  PublicKeyResponse,
  PushRequest,
  PushResponse,
  PutResponse,
  RemoteErrorBody,
  RemoteThreadRow,
  ThreadsResponse,
  TransportEntry,
} from './protocol.js';

/** Bodies above this are sent gzip-encoded (below it, compressing costs more than it saves). */
const GZIP_ABOVE_BYTES = 1024;
const DEFAULT_TIMEOUT_MS = 60_000;
export const EXECUTE_TIMEOUT_MS = 300_000;
/** The most a response may hold: a hostile or broken server cannot fill the client's memory. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

interface CallOptions {
  body?: unknown;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** `/health` and `/public-key` are asked without the key (the key goes only to a pinned server). */
  anonymous?: boolean;
}

export class RemoteClient {
  constructor(readonly remote: ResolvedRemote) {}

  health(signal?: AbortSignal): Promise<HealthResponse> {
    return this.call('GET', 'health', { anonymous: true, timeoutMs: 15_000, ...(signal ? { signal } : {}) });
  }

  publicKey(signal?: AbortSignal): Promise<PublicKeyResponse> {
    return this.call('GET', 'public-key', {
      anonymous: true,
      timeoutMs: 15_000,
      ...(signal ? { signal } : {}),
    });
  }

  has(hashes: string[]): Promise<HasResponse> {
    return this.call('POST', 'objects/has', { body: { hashes } });
  }

  put(entries: TransportEntry[]): Promise<PutResponse> {
    return this.call('POST', 'objects/put', { body: { entries } });
  }

  get(hashes: string[]): Promise<GetResponse> {
    return this.call('POST', 'objects/get', { body: { hashes } });
  }

  push(request: PushRequest): Promise<PushResponse> {
    return this.call('POST', 'push', { body: request });
  }

  execute(request: ExecuteRequest, signal?: AbortSignal): Promise<ExecuteResponse> {
    return this.call('POST', 'execute', {
      body: request,
      timeoutMs: EXECUTE_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
  }

  threads(options: { limit?: number; projectName?: string } = {}): Promise<ThreadsResponse> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.projectName) query.set('project_name', options.projectName);
    const suffix = query.size ? `?${query}` : '';
    return this.call('GET', `threads${suffix}`);
  }

  thread(threadId: string): Promise<RemoteThreadRow> {
    return this.call('GET', `threads/${encodeURIComponent(threadId)}`);
  }

  private async call<T>(method: 'GET' | 'POST', path: string, options: CallOptions = {}): Promise<T> {
    const { remote } = this;
    const url = new URL(path, remote.url);
    const headers: Record<string, string> = { accept: 'application/json', 'accept-encoding': 'gzip' };
    if (!options.anonymous) headers.authorization = `Bearer ${remote.apiKey}`;
    let body: Buffer | undefined;
    if (options.body !== undefined) {
      body = Buffer.from(JSON.stringify(options.body), 'utf8');
      headers['content-type'] = 'application/json';
      if (body.length > GZIP_ABOVE_BYTES) {
        body = gzipSync(body);
        headers['content-encoding'] = 'gzip';
      }
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method, headers, ...(body ? { body } : {}), signal, redirect: 'error' });
      text = await readLimited(response);
    } catch (error) {
      if (options.signal?.aborted)
        throw new RyeError('TIMEOUT', `The call to remote '${remote.name}' was cancelled.`);
      if (timeout.aborted) {
        throw new RyeError(
          'TIMEOUT',
          `Remote '${remote.name}' (${remote.url.origin}) did not answer ${method} /${path.split('?')[0]} within ${timeoutMs / 1000} s.`,
          {
            hint: 'Check the server (its log, its load); a long run may need to be started with async: true.',
          },
        );
      }
      if (error instanceof RyeError) throw error;
      throw unreachable(remote, error);
    }
    const parsed = parseJson(text);
    if (!response.ok) throw answerError(remote, response.status, parsed, text);
    if (parsed === undefined) {
      throw new RyeError(
        'HTTP',
        `Remote '${remote.name}' answered ${method} /${path} with something that is not JSON.`,
        {
          hint: `Check that ${remote.url.href} is a ryeos-remote server.`,
        },
      );
    }
    return parsed as T;
  }
}

async function readLimited(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_RESPONSE_BYTES) throw tooLarge();
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(): RyeError {
  return new RyeError('LIMIT', `A remote's answer was larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB.`, {
    hint: 'Pull fewer objects at once.',
  });
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** One line: which remote, at which url, and what to check. */
function unreachable(remote: ResolvedRemote, error: unknown): RyeError {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return new RyeError(
    'UNAVAILABLE',
    `Cannot reach remote '${remote.name}' at ${remote.url.origin} (${why}).`,
    {
      hint: `Check that the server is running (ryeos-remote serve) and that the url of remote '${remote.name}' is right (rye remote list).`,
      details: { remote: remote.name, url: remote.url.href },
    },
  );
}

const STATUS_CODES: Record<number, RyeErrorCode> = {
  400: 'VALIDATION',
  401: 'PERMISSION',
  403: 'PERMISSION',
  404: 'NOT_FOUND',
  409: 'VALIDATION',
  413: 'LIMIT',
  507: 'LIMIT',
};

/** An error answer as a RyeError: the server's message and hint, its error type when it is one of ours. */
function answerError(remote: ResolvedRemote, status: number, parsed: unknown, text: string): RyeError {
  const body = (parsed && typeof parsed === 'object' ? parsed : {}) as Partial<RemoteErrorBody>;
  const upper = typeof body.error_type === 'string' ? body.error_type.toUpperCase() : '';
  const code = (ERROR_CODES as readonly string[]).includes(upper)
    ? (upper as RyeErrorCode)
    : (STATUS_CODES[status] ?? 'HTTP');
  const message = typeof body.error === 'string' ? body.error : text.slice(0, 200) || `HTTP ${status}`;
  const hint =
    typeof body.hint === 'string'
      ? body.hint
      : status === 401
        ? `Check the API key in ${remote.keyEnv}: it may be wrong, expired or revoked (ryeos-remote keys list on the server).`
        : undefined;
  return new RyeError(code, `Remote '${remote.name}' refused the request (HTTP ${status}): ${message}`, {
    ...(hint ? { hint } : {}),
    details: {
      remote: remote.name,
      http_status: status,
      ...(Array.isArray((body as PutResponse).errors) ? { errors: (body as PutResponse).errors } : {}),
    },
  });
}
