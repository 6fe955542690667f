import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  classificationInput,
  classifyError,
  classifyProviderError,
  MAX_HEADER_DELAY_SECONDS,
  parseErrorClassification,
  retryDelaySeconds,
  UNCLASSIFIED,
} from '../src/hooks/errors.js';
import type { ProviderCallErrorInfo } from '../src/provider/types.js';

const shippedPath = join(import.meta.dirname, '../.ai/config/agent/error_classification.yaml');
const config = parseErrorClassification(parse(readFileSync(shippedPath, 'utf8')), shippedPath);

function failure(fields: Partial<ProviderCallErrorInfo>): ProviderCallErrorInfo {
  return {
    providerId: 'anthropic',
    message: 'failed',
    httpStatus: 400,
    errorClass: 'ProviderCallError',
    retryable: false,
    ...fields,
  };
}

const classify = (fields: Partial<ProviderCallErrorInfo>) => classifyProviderError(config, failure(fields));

describe('classification of provider failures (shipped error_classification.yaml)', () => {
  it('429 is rate limited, retryable, and waits for retry-after', () => {
    const c = classify({
      httpStatus: 429,
      code: 'rate_limit_error',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
      retryAfterSeconds: 17,
    });
    expect(c).toMatchObject({ category: 'rate_limited', retryable: true, code: 'http_429' });
    expect(c.retry_policy.type).toBe('use_header');
    expect(retryDelaySeconds(c.retry_policy, 0, 17)).toBe(17);
    // without the header: the exponential fallback 2/60
    expect(retryDelaySeconds(c.retry_policy, 0)).toBe(2);
    expect(retryDelaySeconds(c.retry_policy, 3)).toBe(16);
    expect(retryDelaySeconds(c.retry_policy, 10)).toBe(60);
  });

  it('a rate-limit error inside a 200 stream is rate limited too', () => {
    expect(classify({ httpStatus: 200, code: 'rate_limit_error', message: 'slow down' }).category).toBe(
      'rate_limited',
    );
    expect(classify({ httpStatus: 0, message: 'Too Many Requests' }).category).toBe('rate_limited');
  });

  it('500, 502, 503, 504 are transient server errors (exp 2/120)', () => {
    for (const status of [500, 502, 503, 504]) {
      const c = classify({ httpStatus: status, message: 'Internal server error', code: 'api_error' });
      expect(c, String(status)).toMatchObject({ category: 'transient', retryable: true, code: 'http_5xx' });
      expect(retryDelaySeconds(c.retry_policy, 0)).toBe(2);
      expect(retryDelaySeconds(c.retry_policy, 6)).toBe(120);
    }
  });

  it('529 and an SSE overloaded_error are transient', () => {
    expect(classify({ httpStatus: 529, code: 'overloaded_error', message: 'Overloaded' })).toMatchObject({
      category: 'transient',
      retryable: true,
      code: 'overloaded',
    });
    // the stream had started (HTTP 200) when the error event arrived
    expect(classify({ httpStatus: 200, code: 'overloaded_error', message: 'Overloaded' })).toMatchObject({
      category: 'transient',
      retryable: true,
    });
  });

  it('a timeout is transient (exp 2/30)', () => {
    const c = classify({
      httpStatus: 0,
      errorClass: 'TimeoutError',
      message: 'Request timed out after 600000 ms',
    });
    expect(c).toMatchObject({ category: 'transient', retryable: true, code: 'network_timeout' });
    expect(retryDelaySeconds(c.retry_policy, 5)).toBe(30);
  });

  it('a refused or reset connection is transient (exp 2/60)', () => {
    expect(
      classify({ httpStatus: 0, errorClass: 'ConnectionError', message: 'connect ECONNREFUSED 127.0.0.1:9' }),
    ).toMatchObject({ category: 'transient', code: 'network_connection' });
    expect(classify({ httpStatus: 0, message: 'read ECONNRESET' })).toMatchObject({
      code: 'network_connection',
    });
    expect(classify({ httpStatus: 0, message: 'Connection refused by peer' })).toMatchObject({
      code: 'network_connection',
    });
  });

  it('any other transport failure (status 0) is transient (exp 3/30)', () => {
    const c = classify({ httpStatus: 0, message: 'fetch failed' });
    expect(c).toMatchObject({ category: 'transient', retryable: true, code: 'http_0_connection' });
    expect(retryDelaySeconds(c.retry_policy, 0)).toBe(3);
    expect(retryDelaySeconds(c.retry_policy, 1)).toBe(6);
    expect(retryDelaySeconds(c.retry_policy, 4)).toBe(30);
  });

  it('401 and 403 are permanent', () => {
    for (const status of [401, 403]) {
      expect(
        classify({ httpStatus: status, code: 'authentication_error', message: 'invalid x-api-key' }),
      ).toMatchObject({ category: 'permanent', retryable: false, code: 'auth_failure' });
    }
    expect(classify({ httpStatus: 200, code: 'authentication_error', message: 'bad key' }).code).toBe(
      'auth_failure',
    );
  });

  it('an exhausted quota is permanent, even when it answers 429', () => {
    for (const code of ['insufficient_quota', 'quota_exceeded', 'billing_hard_limit_reached']) {
      expect(classify({ httpStatus: 429, code, message: 'Request failed' }), code).toMatchObject({
        category: 'permanent',
        retryable: false,
        code: 'quota_exhausted',
      });
    }
    expect(
      classify({
        httpStatus: 429,
        message: 'You exceeded your current quota, please check your plan and billing details.',
      }).code,
    ).toBe('quota_exhausted');
  });

  it('a cancelled call is cancelled, never a retryable transport failure', () => {
    const c = classify({
      httpStatus: 0,
      errorClass: 'CancelledError',
      message: 'This operation was aborted',
    });
    expect(c).toMatchObject({ category: 'cancelled', retryable: false, code: 'cancelled' });
    expect(
      classifyError(config, { error: { type: 'X', message: '' }, status_code: 0, cancelled: true }).code,
    ).toBe('cancelled');
  });

  it('422 and ValidationError are permanent; anything else is the permanent default', () => {
    expect(classify({ httpStatus: 422, message: 'Unprocessable' }).code).toBe('validation_error');
    expect(classify({ httpStatus: 400, errorClass: 'ValidationError', message: 'bad' }).code).toBe(
      'validation_error',
    );
    expect(
      classify({ httpStatus: 400, code: 'invalid_request_error', message: 'max_tokens too large' }),
    ).toEqual({
      category: 'permanent',
      retryable: false,
      retry_policy: { type: 'none' },
      code: UNCLASSIFIED,
    });
  });

  it('maps ProviderCallErrorInfo to the matched document', () => {
    expect(
      classificationInput(
        failure({ httpStatus: 429, code: 'rate_limit_error', message: 'slow', retryAfterSeconds: 3 }),
      ),
    ).toEqual({
      error: { type: 'ProviderCallError', message: 'slow', code: 'rate_limit_error' },
      status_code: 429,
      cancelled: false,
      headers: { 'retry-after': '3' },
    });
  });
});

describe('a config of its own', () => {
  it('first match wins, and a missing config is the permanent default', () => {
    const own = parseErrorClassification(
      {
        patterns: [
          {
            id: 'first',
            category: 'transient',
            retryable: true,
            match: { path: 'status_code', op: 'gte', value: 500 },
          },
          { id: 'second', category: 'permanent', match: { path: 'status_code', value: 503 } },
        ],
        default: { category: 'mystery', retryable: true, retry_policy: { type: 'fixed', delay: 5 } },
      },
      'own.yaml',
    );
    expect(classifyError(own, { status_code: 503 }).code).toBe('first');
    expect(classifyError(own, { status_code: 404 })).toEqual({
      category: 'mystery',
      retryable: true,
      retry_policy: { type: 'fixed', delay: 5 },
      code: UNCLASSIFIED,
    });
    expect(classifyError(parseErrorClassification(null, 'none'), { status_code: 500 })).toMatchObject({
      category: 'permanent',
      retryable: false,
    });
  });

  it('rejects malformed patterns and policies with the file named', () => {
    expect(() => parseErrorClassification({ patterns: {} }, 'e.yaml')).toThrow(
      'Invalid e.yaml: patterns must be a list',
    );
    expect(() => parseErrorClassification({ patterns: [{ id: 'p', category: 'x' }] }, 'e.yaml')).toThrow(
      "Invalid e.yaml pattern 'p': it needs id, category and match",
    );
    expect(() =>
      parseErrorClassification(
        { patterns: [{ id: 'p', category: 'x', match: {}, retry_policy: { type: 'sometimes' } }] },
        'e.yaml',
      ),
    ).toThrow(/Invalid retry_policy in e.yaml pattern 'p'/);
    expect(() =>
      parseErrorClassification(
        {
          patterns: [{ id: 'p', category: 'x', match: {}, retry_policy: { type: 'exponential', base: -1 } }],
        },
        'e.yaml',
      ),
    ).toThrow(/base must be a non-negative number/);
  });
});

describe('retryDelaySeconds', () => {
  it('exponential: min(base * 2^attempt, max), attempt counting consecutive failures from 0', () => {
    const policy = { type: 'exponential' as const, base: 2, max: 120 };
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((a) => retryDelaySeconds(policy, a))).toEqual([
      2, 4, 8, 16, 32, 64, 120, 120,
    ]);
    // defaults 2 and 120; a bad attempt counts as the first
    expect(retryDelaySeconds({ type: 'exponential' }, 2)).toBe(8);
    expect(retryDelaySeconds(policy, -1)).toBe(2);
    expect(retryDelaySeconds(policy, 1.5)).toBe(2);
  });

  it('the delay of a retry depends on the failure index, not on how many turns ran [BUG upstream]', () => {
    const policy = { type: 'exponential' as const, base: 2, max: 120 };
    // the first failure of a thread on its 9th turn still waits the first delay
    expect(retryDelaySeconds(policy, 0)).toBe(2);
  });

  it('fixed waits its delay (default 60)', () => {
    expect(retryDelaySeconds({ type: 'fixed', delay: 7 }, 5)).toBe(7);
    expect(retryDelaySeconds({ type: 'fixed' }, 0)).toBe(60);
  });

  it('use_header takes the header seconds or an HTTP date, bounded, else its fallback', () => {
    const policy = { type: 'use_header' as const, fallback: { type: 'fixed' as const, delay: 9 } };
    expect(retryDelaySeconds(policy, 0, 12)).toBe(12);
    expect(retryDelaySeconds(policy, 0, '1.5')).toBe(1.5);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryDelaySeconds(policy, 0, 'Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(retryDelaySeconds(policy, 0, 'Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(retryDelaySeconds(policy, 0, 'soon')).toBe(9);
    expect(retryDelaySeconds(policy, 0)).toBe(9);
    expect(retryDelaySeconds(policy, 0, 86_400)).toBe(MAX_HEADER_DELAY_SECONDS);
    expect(retryDelaySeconds({ ...policy, max: 5 }, 0, 86_400)).toBe(5);
    // default fallback: exponential 2/60
    expect(retryDelaySeconds({ type: 'use_header' }, 1)).toBe(4);
    expect(retryDelaySeconds({ type: 'use_header' }, 9)).toBe(60);
  });

  it('none (or no policy) is 0', () => {
    expect(retryDelaySeconds({ type: 'none' }, 3)).toBe(0);
    expect(retryDelaySeconds(undefined, 3)).toBe(0);
  });
});
