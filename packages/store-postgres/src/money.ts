/**
 * USD at the database boundary. Amounts are `numeric` columns, so sums are exact decimals; a JS
 * number goes in as its shortest round-trip decimal text and comes back as the nearest double,
 * so a value written is read back unchanged. Comparisons forgive the same nano-dollar the SQLite
 * ledger does (`USD_EPSILON`), so both stores accept and refuse the same reservations.
 */
import { RyeError } from '@ryeos/lillux';

/** Float noise forgiven when comparing money (the SQLite ledger's `USD_EPSILON`). */
export const USD_EPSILON = 1e-9;

/** The text Postgres parses into the exact decimal of `value`. */
export function toNumeric(value: number): string {
  return String(value);
}

/** A `numeric` column (pg hands it over as text, never as a float) as a number. */
export function fromNumeric(value: string | number | null): number {
  return value === null ? 0 : Number(value);
}

export function assertUsd(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new RyeError(
      'VALIDATION',
      `Budget amount ${name} must be a finite number of USD ≥ 0, got ${value}`,
    );
  }
}
