/**
 * Signed answers of a warm worker (protocol 2). A node worker cannot mark itself not dumpable, so
 * another process of the same user can take a copy of its fd 3 with `pidfd_getfd` and write
 * answers for calls in progress; a line counts as the worker's only if it carries an HMAC under
 * a key the host handed to the worker alone, as the first line it read.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface AnswerKey {
  /** The key as the worker receives it (base64). */
  readonly secret: string;
  /** The JSON of a line `<mac> <json>` whose mac matches, else undefined. */
  open(signedLine: string): string | undefined;
}

/** Signature of one line: HMAC-SHA256 of its JSON text, base64url (43 characters). */
export function signLine(key: Buffer, json: string): string {
  return createHmac('sha256', key).update(json).digest('base64url');
}

export function answerKey(key: Buffer): AnswerKey {
  return {
    secret: key.toString('base64'),
    open(signedLine) {
      const space = signedLine.indexOf(' ');
      if (space !== 43) return undefined;
      const json = signedLine.slice(space + 1);
      const given = Buffer.from(signedLine.slice(0, space));
      const expected = Buffer.from(signLine(key, json));
      return given.length === expected.length && timingSafeEqual(given, expected) ? json : undefined;
    },
  };
}
