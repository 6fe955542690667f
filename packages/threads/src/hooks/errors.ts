/**
 * Error classification and retry delays (spec threads §5.7). `error_classification.yaml` holds
 * `patterns` (first match wins, same condition grammar as hooks) and a `default`; the input is a
 * failed provider call as `{error:{type, message, code}, status_code, cancelled}`.
 */
import { RyeError } from '@ryeos/lillux';
import type { ProviderCallErrorInfo } from '../provider/types.js';
import { isRecord } from '../records.js';
import type { Condition } from './conditions.js';
import { matches } from './conditions.js';

export type RetryPolicy =
  | { type: 'exponential'; base?: number; max?: number }
  | { type: 'fixed'; delay?: number }
  | { type: 'use_header'; header?: string; fallback?: RetryPolicy; max?: number }
  | { type: 'none' };

export interface ErrorPattern {
  id: string;
  name?: string;
  category: string;
  retryable: boolean;
  match: Condition;
  retry_policy?: RetryPolicy;
}

export interface ErrorClassificationConfig {
  patterns: ErrorPattern[];
  default: { category: string; retryable: boolean; retry_policy: RetryPolicy };
}

/** What the `error` hooks see as `classification`. `code` is the matching pattern's id. */
export interface ErrorClassification {
  category: string;
  retryable: boolean;
  retry_policy: RetryPolicy;
  code: string;
}

/** The document classification matches against. */
export interface ClassificationInput {
  error: { type: string; message: string; code: string | null };
  /** 0 when no HTTP response arrived. */
  status_code: number;
  cancelled: boolean;
  headers: Record<string, string>;
}

/** The code of the default classification (no pattern matched). */
export const UNCLASSIFIED = 'unclassified';

const DEFAULT_CLASSIFICATION: ErrorClassificationConfig['default'] = {
  category: 'permanent',
  retryable: false,
  retry_policy: { type: 'none' },
};

const POLICY_TYPES = new Set(['exponential', 'fixed', 'use_header', 'none']);

function policy(raw: unknown, where: string): RetryPolicy {
  if (raw === undefined || raw === null) return { type: 'none' };
  if (!isRecord(raw) || typeof raw.type !== 'string' || !POLICY_TYPES.has(raw.type)) {
    throw new RyeError('CONFIG', `Invalid retry_policy in ${where}: ${JSON.stringify(raw)}`, {
      hint: 'retry_policy.type is one of exponential, fixed, use_header, none.',
    });
  }
  for (const key of ['base', 'max', 'delay']) {
    if (raw[key] !== undefined && (typeof raw[key] !== 'number' || raw[key] < 0)) {
      throw new RyeError('CONFIG', `Invalid retry_policy in ${where}: ${key} must be a non-negative number`);
    }
  }
  if (raw.type === 'use_header' && raw.fallback !== undefined) {
    return {
      ...(raw as RetryPolicy & object),
      fallback: policy(raw.fallback, `${where} fallback`),
    } as RetryPolicy;
  }
  return raw as RetryPolicy;
}

/** A parsed `error_classification.yaml` (after the config merge), checked. */
export function parseErrorClassification(raw: unknown, source: string): ErrorClassificationConfig {
  const doc = isRecord(raw) ? raw : {};
  const list = doc.patterns ?? [];
  if (!Array.isArray(list)) {
    throw new RyeError('CONFIG', `Invalid ${source}: patterns must be a list`, {
      hint: 'Write patterns: followed by a list of {id, category, retryable, match, retry_policy}.',
    });
  }
  const patterns = list.map((p, i): ErrorPattern => {
    const id = isRecord(p) && typeof p.id === 'string' ? p.id : `#${i}`;
    const where = `${source} pattern '${id}'`;
    if (!isRecord(p) || typeof p.id !== 'string' || typeof p.category !== 'string' || !isRecord(p.match)) {
      throw new RyeError('CONFIG', `Invalid ${where}: it needs id, category and match`, {
        hint: 'Each pattern is {id, category, retryable, match: {path, op, value}, retry_policy}.',
      });
    }
    return {
      id: p.id,
      ...(typeof p.name === 'string' ? { name: p.name } : {}),
      category: p.category,
      retryable: p.retryable === true,
      match: p.match,
      retry_policy: policy(p.retry_policy, where),
    };
  });
  const d = isRecord(doc.default) ? doc.default : {};
  return {
    patterns,
    default: {
      category: typeof d.category === 'string' ? d.category : DEFAULT_CLASSIFICATION.category,
      retryable: d.retryable === true,
      retry_policy:
        d.retry_policy === undefined ? { type: 'none' } : policy(d.retry_policy, `${source} default`),
    },
  };
}

/** A provider failure as the document the patterns match. */
export function classificationInput(info: ProviderCallErrorInfo): ClassificationInput {
  return {
    error: { type: info.errorClass, message: info.message, code: info.code ?? null },
    status_code: info.httpStatus,
    cancelled: info.errorClass === 'CancelledError',
    headers: info.retryAfterSeconds === undefined ? {} : { 'retry-after': String(info.retryAfterSeconds) },
  };
}

/** The first pattern that matches, else the default. */
export function classifyError(config: ErrorClassificationConfig, input: unknown): ErrorClassification {
  for (const pattern of config.patterns) {
    if (matches(pattern.match, input)) {
      return {
        category: pattern.category,
        retryable: pattern.retryable,
        retry_policy: pattern.retry_policy ?? { type: 'none' },
        code: pattern.id,
      };
    }
  }
  return { ...config.default, code: UNCLASSIFIED };
}

export function classifyProviderError(
  config: ErrorClassificationConfig,
  info: ProviderCallErrorInfo,
): ErrorClassification {
  return classifyError(config, classificationInput(info));
}

/** A `retry-after` header can hold a huge number; no single wait is longer than this unless `max` says so. */
export const MAX_HEADER_DELAY_SECONDS = 600;

/** Seconds from a `retry-after` value: delta-seconds or an HTTP date; anything else is undefined. */
function headerSeconds(value: number | string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/**
 * The wait before retry number `attempt` (0-based index of the consecutive failure — never the
 * turn count [BUG upstream]): exponential `min(base·2^attempt, max)` (defaults 2 and 120), fixed
 * `delay` (60), use_header = the header's seconds (at most `max`, default 600) else the fallback
 * (exponential 2/60), none 0.
 */
export function retryDelaySeconds(
  policy: RetryPolicy | undefined,
  attempt: number,
  retryAfterHeader?: number | string,
  now: number = Date.now(),
): number {
  const n = Number.isInteger(attempt) && attempt > 0 ? attempt : 0;
  switch (policy?.type) {
    case 'exponential':
      return Math.min((policy.base ?? 2) * 2 ** n, policy.max ?? 120);
    case 'fixed':
      return policy.delay ?? 60;
    case 'use_header': {
      const seconds = headerSeconds(retryAfterHeader, now);
      if (seconds !== undefined) return Math.min(seconds, policy.max ?? MAX_HEADER_DELAY_SECONDS);
      return retryDelaySeconds(policy.fallback ?? { type: 'exponential', base: 2, max: 60 }, n);
    }
    default:
      return 0;
  }
}
