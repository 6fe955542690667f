/**
 * The one error class of ryeos. Every layer throws `RyeError` with a code from a closed union;
 * boundaries (CLI, MCP, API) turn it into an envelope with `toErrorEnvelope`.
 * Recognise it by `name`/`code` (`isRyeError`), not only `instanceof`, because several copies of
 * this package can be loaded at once.
 */
import type { Fix } from './fix.js';

export const ERROR_CODES = [
  'NOT_FOUND',
  'INTEGRITY',
  'VALIDATION',
  'CHAIN',
  'PERMISSION',
  'LIMIT',
  'TIMEOUT',
  /** A tool ran and failed: non-zero exit, or it reported `success: false` itself. */
  'EXECUTION',
  'PROVIDER',
  'SPAWN',
  'HTTP',
  'CONFIG',
  'UNAVAILABLE',
  'INTERNAL',
] as const;

export type RyeErrorCode = (typeof ERROR_CODES)[number];

/** An envelope's `error_type`: the lower-case code (DECISIONS 17). A closed union. */
export type ErrorType = Lowercase<RyeErrorCode>;

/** Every `error_type` an envelope may carry. */
export const ERROR_TYPES: readonly ErrorType[] = ERROR_CODES.map((code) => code.toLowerCase() as ErrorType);

export function isErrorType(value: unknown): value is ErrorType {
  return typeof value === 'string' && (ERROR_TYPES as readonly string[]).includes(value);
}

export interface RyeErrorOptions {
  /** What to do about it, in one line a person can act on, in words that fit every caller. */
  hint?: string;
  /** The action that fixes it, as data; each caller's layer renders it (a CLI command, an MCP call). */
  fix?: Fix;
  /** Structured data a caller may need (paths, ids, lists). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class RyeError extends Error {
  override readonly name = 'RyeError';
  readonly code: RyeErrorCode;
  readonly hint: string | undefined;
  readonly fix: Fix | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: RyeErrorCode, message: string, options: RyeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.fix = options.fix;
    this.details = options.details ?? {};
  }
}

export function isRyeError(value: unknown): value is RyeError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'RyeError' &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}

/** Turns any thrown value into a RyeError (unknown values become `INTERNAL`). */
export function toRyeError(value: unknown): RyeError {
  if (isRyeError(value)) return value;
  if (value instanceof Error) return new RyeError('INTERNAL', value.message, { cause: value });
  return new RyeError('INTERNAL', String(value));
}

export interface ErrorEnvelope {
  status: 'error';
  error: string;
  error_type: ErrorType;
  hint?: string;
  /** What fixes it, as data (the CLI and MCP render it for their callers). */
  fix?: Fix;
  [key: string]: unknown;
}

/** The boundary form of an error: `error_type` is the lower-case code (DECISIONS 17). */
export function toErrorEnvelope(value: unknown, extra: Record<string, unknown> = {}): ErrorEnvelope {
  const error = toRyeError(value);
  const envelope: ErrorEnvelope = {
    status: 'error',
    error: error.message,
    error_type: error.code.toLowerCase() as ErrorType,
    ...extra,
  };
  // `extra` adds context (item ids, chains); it never overrides what the error says.
  envelope.status = 'error';
  envelope.error = error.message;
  envelope.error_type = error.code.toLowerCase() as ErrorType;
  if (error.hint) envelope.hint = error.hint;
  if (error.fix) envelope.fix = error.fix;
  return envelope;
}
