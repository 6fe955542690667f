/**
 * Thread limits (spec threads §3): resolved once at setup from `resilience.yaml limits.defaults`,
 * the directive's `<limits>`, the caller's `limit_overrides` and the parent's resolved limits, then
 * checked before every turn.
 */
import { RyeError } from '@ryeos/lillux';
import type { ChatMessage } from '../provider/types.js';
import type { LimitCode } from '../result-codes.js';

export interface Limits {
  /** Successful LLM responses. */
  turns: number;
  /** Cumulative input + output tokens over all turns. */
  tokens: number;
  /** Own spend, in `spend_currency`. */
  spend: number;
  /** Children this thread may create. */
  spawns: number;
  /** Remaining spawn depth: 0 runs but cannot spawn, below 0 cannot run. */
  depth: number;
  /** Wall time since the runner started. */
  duration_seconds: number;
  /** A label only. */
  spend_currency: string;
  /** Further keys a project adds to `limits.defaults` pass through unchanged. */
  [key: string]: number | string;
}

/**
 * The shipped `limits.defaults` (`packages/ryeos/.ai/config/agent/resilience.yaml`). Used for any
 * key the merged config lacks, so a project that overrides only `turns` still has every limit.
 */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  turns: 25,
  tokens: 200000,
  spend: 1.0,
  spawns: 50,
  depth: 10,
  duration_seconds: 1800,
  spend_currency: 'USD',
});

/** The limits a parent's resolved value caps (`min(child, parent)`); depth has its own rule. */
const PARENT_CAPPED = ['turns', 'tokens', 'spend', 'spawns', 'duration_seconds'] as const;

export type LimitValues = Readonly<Record<string, unknown>>;

export interface ResolveLimitsInput {
  /** `resilience.yaml` `limits.defaults`, merged system → user → project. */
  defaults?: LimitValues;
  /** The directive's `<limits>` attributes (the parser already made `8` an int, `0.5` a float). */
  directiveLimits?: LimitValues;
  /** The caller's `limit_overrides`. */
  overrides?: LimitValues;
  /** The parent's resolved limits, from its signed `thread.json`; absent for a root thread. */
  parentLimits?: LimitValues;
}

/** `8` → 8, `0.5` → 0.5 (a value with `.` is a float, else an int), as the directive parser reads. */
function numberFrom(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^-?\d+\.\d*$|^-?\d*\.\d+$/.test(text)) return Number.parseFloat(text);
  if (/^-?\d+$/.test(text)) return Number.parseInt(text, 10);
  return undefined;
}

function checkedValue(key: string, value: unknown, like: number | string, source: string): number | string {
  const where = `Limit '${key}' in ${source}`;
  const fail = (what: string) =>
    new RyeError(source === 'resilience.yaml limits.defaults' ? 'CONFIG' : 'VALIDATION', `${where} ${what}`, {
      hint: `e.g. <limits turns="8" spend="0.5" depth="2"/>, or limit_overrides {"turns": 8}.`,
      details: { key, value },
    });
  if (typeof like === 'string') {
    if (typeof value !== 'string' || !value.trim())
      throw fail(`must be a non-empty string, got ${JSON.stringify(value)}`);
    return value.trim();
  }
  const n = numberFrom(value);
  if (n === undefined) throw fail(`must be a number, got ${JSON.stringify(value)}`);
  // Depth may go negative (it is what "exhausted" means); a negative budget is always a mistake.
  if (n < 0 && key !== 'depth') throw fail(`must not be negative, got ${n}`);
  return n;
}

function overlay(
  base: Record<string, number | string>,
  values: LimitValues | undefined,
  source: string,
  validKeys: readonly string[],
): void {
  for (const [key, value] of Object.entries(values ?? {})) {
    if (!validKeys.includes(key)) {
      throw new RyeError(
        'VALIDATION',
        `Unknown limit '${key}' in ${source}. Valid limits: ${[...validKeys].sort().join(', ')}`,
        { hint: 'Limit names carry no max_ prefix: turns, tokens, spend, spawns, duration_seconds, depth.' },
      );
    }
    base[key] = checkedValue(key, value, base[key]!, source);
  }
}

/**
 * `{...defaults, ...directive <limits>, ...limit_overrides}` where an override only lowers (never
 * above the directive's value, or the default's where it is silent), then capped by the parent: `turns,
 * tokens, spend, spawns, duration_seconds` take `min(child, parent)`, and `depth` becomes
 * `min(depth, parent.depth − 1)` (a root keeps its depth). Every directive or override key must be
 * a key of the defaults (so `max_turns` is an error, not a silently ignored limit).
 */
export function resolveLimits(input: ResolveLimitsInput): Limits {
  const resolved: Record<string, number | string> = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(input.defaults ?? {})) {
    const like = resolved[key] ?? (typeof value === 'string' && numberFrom(value) === undefined ? '' : 0);
    resolved[key] = checkedValue(key, value, like, 'resilience.yaml limits.defaults');
  }
  const validKeys = Object.keys(resolved);
  overlay(resolved, input.directiveLimits, 'directive <limits>', validKeys);
  // A caller's overrides only lower: the signed directive (or the defaults where it is silent)
  // says how far its thread may go, and a caller cannot buy it more turns or spend.
  const allowed = { ...resolved };
  overlay(resolved, input.overrides, 'limit overrides', validKeys);
  for (const [key, value] of Object.entries(resolved)) {
    const ceiling = allowed[key];
    if (typeof value === 'number' && typeof ceiling === 'number') resolved[key] = Math.min(value, ceiling);
  }

  const parent = input.parentLimits;
  if (parent) {
    for (const key of PARENT_CAPPED) {
      const cap = numberFrom(parent[key]);
      if (cap !== undefined) resolved[key] = Math.min(resolved[key] as number, cap);
    }
    const parentDepth = numberFrom(parent.depth);
    if (parentDepth !== undefined) resolved.depth = Math.min(resolved.depth as number, parentDepth - 1);
  }
  return resolved as Limits;
}

/** Setup step 8: a thread whose resolved depth is below 0 must not run. */
export function checkDepth(limits: Pick<Limits, 'depth'>): void {
  if (limits.depth < 0) {
    throw new RyeError('LIMIT', `Depth limit exhausted (resolved depth=${limits.depth})`, {
      hint: 'The parent chain is as deep as its limits allow; raise depth on the root directive to nest further.',
      details: { depth: limits.depth },
    });
  }
}

export interface LimitUsage {
  turns: number;
  /** Input + output tokens so far. */
  tokens: number;
  spend: number;
  elapsedSeconds: number;
}

export interface LimitBreach {
  limit_code: LimitCode;
  current_value: number;
  current_max: number;
}

/**
 * The pre-turn check: turns, tokens, spend, duration in that order; the first `current >= max`
 * is the breach. `ledgerRemaining` is the budget ledger's `remaining` for this thread (its own
 * spend, its children's and their open reservations); at or below 0 that is a spend breach too,
 * reported as the spend the ledger accounts for (`max − remaining`) against `limits.spend`.
 */
export function checkPreTurnLimits(
  limits: Pick<Limits, 'turns' | 'tokens' | 'spend' | 'duration_seconds'>,
  usage: LimitUsage,
  ledgerRemaining?: number,
): LimitBreach | undefined {
  if (usage.turns >= limits.turns)
    return { limit_code: 'turns_exceeded', current_value: usage.turns, current_max: limits.turns };
  if (usage.tokens >= limits.tokens)
    return { limit_code: 'tokens_exceeded', current_value: usage.tokens, current_max: limits.tokens };
  if (usage.spend >= limits.spend)
    return { limit_code: 'spend_exceeded', current_value: usage.spend, current_max: limits.spend };
  if (ledgerRemaining !== undefined && ledgerRemaining <= 0)
    return {
      limit_code: 'spend_exceeded',
      current_value: limits.spend - ledgerRemaining,
      current_max: limits.spend,
    };
  if (usage.elapsedSeconds >= limits.duration_seconds) {
    return {
      limit_code: 'duration_seconds_exceeded',
      current_value: usage.elapsedSeconds,
      current_max: limits.duration_seconds,
    };
  }
  return undefined;
}

/** `Limit exceeded: turns_exceeded (3/3)`: the thread's error when no `limit` hook takes over. */
export function limitMessage(breach: LimitBreach): string {
  return `Limit exceeded: ${breach.limit_code} (${breach.current_value}/${breach.current_max})`;
}

export interface ErrorContext<E = unknown> {
  /** The latest assistant text, first 500 characters ('' when none). */
  last_assistant: string;
  /** Up to 3 recent tool results (first 300 characters each), newest first. */
  recent_tool_calls: string[];
  /** Up to 3 recent tool results that mention an error or a denial, newest first. */
  recent_errors: string[];
  /** The last 3 failed LLM calls. */
  recent_llm_errors: E[];
}

const chars = (s: string, n: number): string => Array.from(s).slice(0, n).join('');

/**
 * What the model was doing when a limit hit, for the parent or a `limit` hook: scans the last 12
 * messages newest first and stops after 6 tool results (as the reference does).
 */
export function limitErrorContext<E>(
  messages: readonly ChatMessage[],
  recentLlmErrors: readonly E[] = [],
): ErrorContext<E> {
  let last_assistant = '';
  const recent_tool_calls: string[] = [];
  const recent_errors: string[] = [];
  for (const message of messages.slice(-12).reverse()) {
    if (message.role === 'assistant') {
      if (!last_assistant) last_assistant = chars(message.content, 500);
    } else if (message.role === 'tool') {
      const lower = message.content.toLowerCase();
      const snippet = chars(message.content, 300);
      if (lower.includes('error') || lower.includes('denied')) recent_errors.push(snippet);
      else recent_tool_calls.push(snippet);
      if (recent_tool_calls.length + recent_errors.length >= 6) break;
    }
  }
  return {
    last_assistant,
    recent_tool_calls: recent_tool_calls.slice(0, 3),
    recent_errors: recent_errors.slice(0, 3),
    recent_llm_errors: recentLlmErrors.slice(-3),
  };
}
