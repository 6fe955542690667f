/**
 * A monotonic clock in milliseconds, for durations (its origin is arbitrary). Not
 * `performance.now()`: node loads `node:perf_hooks` on the first use of the global `performance`,
 * ~1.3 ms of every cold `rye execute`, for a reading `process.hrtime` gives for free.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
