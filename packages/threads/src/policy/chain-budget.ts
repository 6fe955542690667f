/**
 * A handoff chain shares one budget: each continuation starts with what the chain has left (the
 * limits its previous thread started with, less what that thread used), never a fresh budget.
 * Applied at every handoff, this makes turns, tokens, spend and wall time hold for the whole chain.
 */
import type { ThreadCost } from '../store/types.js';
import type { Limits } from './limits.js';

/** `coordination.yaml` `continuation.max_chain_length`: threads one handoff chain may hold. */
export const DEFAULT_MAX_CHAIN_LENGTH = 10;

/** The chain-wide limits and how a thread's cost counts against each. */
const USAGE: ReadonlyArray<readonly [keyof Limits & string, (cost: ThreadCost) => number]> = [
  ['turns', (cost) => cost.turns],
  ['tokens', (cost) => cost.input_tokens + cost.output_tokens],
  ['spend', (cost) => cost.spend],
  ['duration_seconds', (cost) => cost.elapsed_seconds],
];

/**
 * What a chain has left after a thread that started with `limits` and used `cost`: never below 0,
 * and a limit or a cost the record lacks counts as exhausted (a record with holes gets no room).
 */
export function chainRemaining(
  limits: Readonly<Record<string, unknown>>,
  cost: Partial<ThreadCost> | undefined,
): Partial<Record<string, number>> {
  const left: Partial<Record<string, number>> = {};
  for (const [key, used] of USAGE) {
    const limit = Number(limits[key]);
    const spent = used({
      turns: Number(cost?.turns),
      input_tokens: Number(cost?.input_tokens),
      output_tokens: Number(cost?.output_tokens),
      spend: Number(cost?.spend),
      elapsed_seconds: Number(cost?.elapsed_seconds),
    });
    const room = limit - spent;
    // Rounded to the nano-unit: spends are float sums, and 0.1 − 0.1 must be 0, not −1e-17.
    left[key] = Number.isFinite(room) ? Math.max(0, Math.round(room * 1e9) / 1e9) : 0;
  }
  return left;
}

/** The max chain length from `coordination.yaml` `continuation`, or the default when unset or invalid. */
export function maxChainLength(continuation: Readonly<Record<string, unknown>>): number {
  const value = Number(continuation.max_chain_length);
  return Number.isInteger(value) && value >= 1 ? value : DEFAULT_MAX_CHAIN_LENGTH;
}
