/**
 * A continuation never gets more room than the thread it continues had; a handoff's gets only
 * what its chain has left, so a model that fills its context cannot buy itself a fresh budget.
 */
import type { carriedConversation } from '../orchestration/continuation.js';
import { chainRemaining, maxChainLength } from '../policy/chain-budget.js';
import type { Limits } from '../policy/limits.js';
import type { ThreadStore } from '../store/types.js';
import { fail } from './setup-failure.js';

/** The previous thread's verified record and the tail of its conversation. */
export type Carried = Awaited<ReturnType<typeof carriedConversation>>;

/** Lowers `limits` in place and returns this thread's place in its chain (refused past its length). */
export async function limitToChain(
  limits: Limits,
  options: {
    carried: Carried | undefined;
    handoff: boolean;
    previousThreadId: string | undefined;
    store: ThreadStore;
    continuation: Record<string, unknown>;
  },
): Promise<number> {
  const { carried, handoff, store } = options;
  if (!carried) return 1;
  const chainLength = carried.chainLength + 1;
  const previousLimits = carried.record.limits as Record<string, unknown>;
  const left = handoff ? chainRemaining(previousLimits, carried.record.cost) : {};
  // Its own cost leaves out what its children spent from its budget: the ledger counts both.
  if (handoff && left.spend !== undefined) {
    const ledgerLeft = await ledgerRemaining(store, carried.record.thread_id);
    if (ledgerLeft !== undefined) left.spend = Math.min(left.spend, ledgerLeft);
  }
  // Spawns too: the children and async tool runs the chain started are counted on its threads'
  // registry rows, so the continuation gets the previous thread's spawns less what it took.
  const spawnLimit = Number(previousLimits.spawns);
  if (handoff && Number.isFinite(spawnLimit)) {
    const taken = (await store.registry.getThread(carried.record.thread_id))?.spawn_count ?? spawnLimit;
    left.spawns = Math.max(0, spawnLimit - taken);
  }
  for (const key of ['turns', 'tokens', 'spend', 'spawns', 'duration_seconds', 'depth'] as const) {
    const previous = Number(previousLimits[key]);
    const room = Math.min(Number.isFinite(previous) ? previous : Infinity, left[key] ?? Infinity);
    if (room !== Infinity) limits[key] = Math.min(Number(limits[key]), room);
  }
  const maxChain = maxChainLength(options.continuation);
  if (handoff && chainLength > maxChain) {
    fail(
      'LIMIT',
      `Handoff refused: the chain of '${options.previousThreadId}' already holds ${maxChain} threads (coordination.yaml continuation.max_chain_length)`,
      'Split the work into smaller directives, or raise continuation.max_chain_length in coordination.yaml.',
    );
  }
  return chainLength;
}

/** What a thread's ledger row has left (its own and its children's spend counted); undefined without a row. */
async function ledgerRemaining(store: ThreadStore, threadId: string): Promise<number | undefined> {
  if (!(await store.ledger.get(threadId))) return undefined;
  return Math.max(0, Math.round((await store.ledger.getRemaining(threadId)) * 1e9) / 1e9);
}
