/** Retry policy of the `http` primitive: which outcomes retry, and how long to wait. */

export interface BackoffPolicy {
  backoff: 'exponential' | 'linear';
  baseDelayMs: number;
  maxRetryDelayMs: number;
}

/** 429 and 5xx are worth another attempt; other statuses are final. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status < 600);
}

/** Delay before retry `n` (0-based): `base * 2^n` or `base`, capped. */
export function backoffDelay(n: number, policy: BackoffPolicy): number {
  const raw = policy.backoff === 'linear' ? policy.baseDelayMs : policy.baseDelayMs * 2 ** n;
  return Math.min(raw, policy.maxRetryDelayMs);
}

/**
 * `retry-after` in ms: delta-seconds (`120`) or an HTTP-date. `undefined` when absent or unreadable;
 * a date in the past gives 0.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Delay before retry `n` after a response: `retry-after` when readable (capped), else backoff. */
export function retryDelay(n: number, retryAfter: string | null, policy: BackoffPolicy): number {
  const hinted = parseRetryAfter(retryAfter);
  if (hinted === undefined) return backoffDelay(n, policy);
  return Math.min(hinted, policy.maxRetryDelayMs);
}

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
