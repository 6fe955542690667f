/**
 * A provider's token count as the integer the rest of ryeos stores, budgets and reports: a
 * fraction is rounded up (spend is never under-counted) and a negative, non-finite or
 * non-number value counts as not reported (it could only lower the spend a budget sees).
 */
export function tokenCount(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
  return Math.ceil(value);
}
