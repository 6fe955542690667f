/**
 * The typed integrity failure: its own module because reading item text (below verification)
 * already refuses bytes with it.
 */
import type { RyeErrorOptions } from '@ryeos/lillux';
import { isRyeError, RyeError } from '@ryeos/lillux';

export type IntegrityOutcome =
  | 'ok'
  | 'unsigned'
  | 'modified'
  | 'untrusted'
  | 'bad_signature'
  | 'moved'
  | 'legacy_partial';

/** An integrity failure, with its outcome as a typed field (never a string in `details`). */
export class IntegrityError extends RyeError {
  readonly outcome: Exclude<IntegrityOutcome, 'ok'>;

  constructor(outcome: Exclude<IntegrityOutcome, 'ok'>, message: string, options: RyeErrorOptions = {}) {
    super('INTEGRITY', message, options);
    this.outcome = outcome;
  }
}

/** Whether `error` is an integrity failure with this outcome (works across package copies). */
export function isIntegrityFailure(error: unknown, outcome?: IntegrityOutcome): error is IntegrityError {
  return (
    isRyeError(error) &&
    error.code === 'INTEGRITY' &&
    typeof (error as Partial<IntegrityError>).outcome === 'string' &&
    (outcome === undefined || (error as IntegrityError).outcome === outcome)
  );
}
