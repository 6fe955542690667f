/**
 * The request bytes the server holds at once, over all connections. Bodies that arrive slowly or
 * never end would otherwise each hold up to the body limit: many of them add up to any amount of
 * memory. A body that would go past the budget is refused (503, retry later) instead.
 */
export class InflightBytes {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Reserves `bytes`; false (nothing reserved) when that would go past the limit. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}
