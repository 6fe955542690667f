/**
 * The Postgres store's typed failures: each a `RyeError` whose `details.reason` matches what the
 * embedded store says for the same case, so callers never look at a driver's error. A driver's
 * message may name the server; it never names the connection string (which may hold a password).
 */
import { isRyeError, RyeError } from '@ryeos/lillux';

/** SQLSTATE classes and codes that mean "the database could not be reached or answer in time". */
const UNAVAILABLE_STATES = new Set(['53300', '55P03', '57014', '57P01', '57P02', '57P03']);
const NODE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
]);

interface DriverError {
  code?: unknown;
  message?: unknown;
}

function sqlState(error: unknown): string | undefined {
  const code = (error as DriverError | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A deadlock or serialization failure: the transaction is safe to run again. */
export function isRetryable(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40P01' || code === '40001';
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

function isUnavailable(error: unknown): boolean {
  const code = sqlState(error) ?? '';
  if (UNAVAILABLE_STATES.has(code) || code.startsWith('08') || NODE_NETWORK_CODES.has(code)) return true;
  const message = String((error as DriverError | null)?.message ?? '');
  return /timeout|terminated|Connection ended|not queryable/i.test(message);
}

/** The message of a driver error with every occurrence of `secret` blanked out. */
export function redact(message: string, secret: string | undefined): string {
  return secret ? message.split(secret).join('***') : message;
}

/** The part of the store an operation belongs to; it names the error's reason. */
export type StorePart = 'registry' | 'ledger' | 'store';

/**
 * Turns a driver error into a RyeError: UNAVAILABLE (retry) when the database was unreachable,
 * busy or a lock wait timed out, INTERNAL otherwise. RyeErrors pass through unchanged.
 */
export function translate(part: StorePart, operation: string, error: unknown, secret?: string): Error {
  if (isRyeError(error)) return error;
  const message = redact(String((error as DriverError | null)?.message ?? error), secret);
  const state = sqlState(error);
  if (isUnavailable(error)) {
    const reason =
      part === 'ledger'
        ? 'budget_ledger_locked'
        : part === 'registry'
          ? 'thread_registry_locked'
          : 'store_unavailable';
    return new RyeError(
      'UNAVAILABLE',
      `Thread store (PostgreSQL) unavailable: ${operation} failed: ${message}`,
      {
        hint: 'Check that the PostgreSQL server is running and reachable, then retry; a lock held by another worker is released when its transaction ends.',
        details: { reason, operation, ...(state ? { sqlstate: state } : {}) },
      },
    );
  }
  return new RyeError('INTERNAL', `Thread store (PostgreSQL): ${operation} failed: ${message}`, {
    hint: 'This is a bug or a database changed by hand; report it with the operation named here.',
    details: { reason: 'store_failed', operation, ...(state ? { sqlstate: state } : {}) },
  });
}

export class ThreadAlreadyRegistered extends RyeError {
  constructor(threadId: string) {
    super('VALIDATION', `Thread ${threadId} is already registered`, {
      hint: 'Pick a fresh id: makeThreadId(directive, stamp) for the next stamp that await registry.exists(id) answers false for.',
      details: { reason: 'thread_exists', thread_id: threadId },
    });
  }
}
