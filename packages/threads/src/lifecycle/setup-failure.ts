/**
 * How a thread that never reached its loop ends: a typed refusal, recorded in the registry when
 * the thread got a row, and returned as the thread's result (never thrown to the caller).
 */
import { type ErrorType, RyeError, toRyeError } from '@ryeos/lillux';
import { type ThreadStore, ZERO_COST } from '../store/types.js';
import type { ThreadResult } from '../thread-request.js';

/** A setup step failed: recorded in the registry and returned as the thread's error. */
export class SetupFailure extends Error {
  constructor(
    readonly failure: RyeError,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(failure.message);
  }
}

export function fail(
  code: RyeError['code'],
  message: string,
  hint?: string,
  extra: Record<string, unknown> = {},
): never {
  throw new SetupFailure(new RyeError(code, message, hint ? { hint } : {}), extra);
}

/** A thread that failed before its loop ran: recorded in the registry (when it got a row) and returned. */
export async function failedThread(
  error: unknown,
  store: ThreadStore | undefined,
  threadId: string | undefined,
  directiveId: string,
): Promise<ThreadResult> {
  const failure = error instanceof SetupFailure ? error : new SetupFailure(toRyeError(error));
  if (store && threadId) {
    try {
      await store.registry.updateStatus(threadId, 'error');
      await store.registry.setResult(threadId, { error: failure.failure.message, cost: ZERO_COST });
    } catch {
      // The registry is best effort here: the caller still gets the error.
    }
  }
  return {
    success: false,
    status: 'error',
    ...(threadId ? { thread_id: threadId } : {}),
    directive: directiveId,
    cost: { ...ZERO_COST },
    error: failure.failure.message,
    error_type: failure.failure.code.toLowerCase() as ErrorType,
    ...(failure.failure.hint ? { hint: failure.failure.hint } : {}),
    ...(failure.failure.fix ? { fix: failure.failure.fix } : {}),
    ...failure.extra,
  };
}

/** Now, as the records write it: ISO to the second with an explicit UTC offset. */
export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00');
}
