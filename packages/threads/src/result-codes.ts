/**
 * The codes a thread's result carries: which limit stopped it, which of the runner's own refusals
 * ended it, and the closed `ErrorType` a caller branches on. A hook's control result is repository
 * data spread into the loop's result, so a code is kept only when it is one of these.
 */
import { type ErrorType, isErrorType } from '@ryeos/lillux';

export const LIMIT_CODES = [
  'turns_exceeded',
  'tokens_exceeded',
  'spend_exceeded',
  'duration_seconds_exceeded',
] as const;
/** The limit that stopped a thread. */
export type LimitCode = (typeof LIMIT_CODES)[number];

export const THREAD_ERROR_CODES = [
  /** A handoff's continuation would pass the chain's `max_chain_length`. */
  'chain_length_exceeded',
  /** The model stopped answering without returning the outputs its directive requires. */
  'required_outputs_missing',
] as const;
/** A refusal of the runner's own that is not a limit breach. */
export type ThreadErrorCode = (typeof THREAD_ERROR_CODES)[number];

export function isLimitCode(value: unknown): value is LimitCode {
  return typeof value === 'string' && (LIMIT_CODES as readonly string[]).includes(value);
}

export function isThreadErrorCode(value: unknown): value is ThreadErrorCode {
  return typeof value === 'string' && (THREAD_ERROR_CODES as readonly string[]).includes(value);
}

/** What ended a failed run, as a caller reads it. */
export interface FailureCodes {
  error_type: ErrorType;
  limit_code?: LimitCode;
  error_code?: ThreadErrorCode;
}

/**
 * A failed run's codes: a hook's own `error_type` when it is one of the closed set; else `limit`
 * for a limit breach or a chain too long, and `execution` for every other way a run can fail.
 */
export function failureCodes(run: {
  error_type?: unknown;
  limit_code?: unknown;
  error_code?: unknown;
}): FailureCodes {
  const limit = isLimitCode(run.limit_code) ? run.limit_code : undefined;
  const code = isThreadErrorCode(run.error_code) ? run.error_code : undefined;
  const type: ErrorType = isErrorType(run.error_type)
    ? run.error_type
    : limit || code === 'chain_length_exceeded'
      ? 'limit'
      : 'execution';
  return { error_type: type, ...(limit ? { limit_code: limit } : {}), ...(code ? { error_code: code } : {}) };
}
