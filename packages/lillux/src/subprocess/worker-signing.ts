/**
 * Signed answers of a warm worker (protocol 2). A node worker cannot mark itself not dumpable, so
 * another process of the same user can take a copy of its fd 3 with `pidfd_getfd` and write
 * answers for calls in progress; a line counts as the worker's only if it carries an HMAC under
 * a key the host handed to the worker alone, as the first line it read. The HMAC also covers a
 * digest of the exact request the host sent for that id: a request another process writes on the
 * worker's channel (with parameters of its own, for an id in progress) gets an answer the host
 * refuses.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface AnswerKey {
  /** The key as the worker receives it (base64). */
  readonly secret: string;
  /** Notes the exact line sent for request `id`: its answers must be signed over it. */
  sent(id: unknown, requestLine: string): void;
  /**
   * The message of a line `<mac> <json>` whose mac matches under the request its id names, else
   * undefined. A final answer (no `stream`) retires its request.
   */
  open(signedLine: string): Record<string, unknown> | undefined;
}

/** Digest of one request line, as both ends compute it over the line without its newline. */
export function requestDigest(requestLine: string): string {
  return createHash('sha256').update(requestLine).digest('base64url');
}

/** Signature of one answer line: HMAC-SHA256 of its request's digest and its JSON, base64url. */
export function signLine(key: Buffer, digest: string, json: string): string {
  return createHmac('sha256', key).update(`${digest}\n${json}`).digest('base64url');
}

export function answerKey(key: Buffer): AnswerKey {
  const requests = new Map<unknown, string>();
  return {
    secret: key.toString('base64'),
    sent(id, requestLine) {
      requests.set(id, requestDigest(requestLine));
    },
    open(signedLine) {
      const space = signedLine.indexOf(' ');
      if (space !== 43) return undefined;
      const json = signedLine.slice(space + 1);
      let message: unknown;
      try {
        message = JSON.parse(json);
      } catch {
        return undefined;
      }
      if (!message || typeof message !== 'object' || Array.isArray(message)) return undefined;
      const { id, stream } = message as { id?: unknown; stream?: unknown };
      const digest = requests.get(id);
      if (digest === undefined) return undefined;
      const given = Buffer.from(signedLine.slice(0, space));
      const expected = Buffer.from(signLine(key, digest, json));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      if (typeof stream !== 'string') requests.delete(id);
      return message as Record<string, unknown>;
    },
  };
}
