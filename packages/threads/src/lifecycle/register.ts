/**
 * A fork's writes to the store: its registry row, its parent's spawn slot and its budget. Checks
 * come first so that a refused fork writes nothing; the writes that race with siblings undo
 * themselves when they lose.
 */
import { existsSync } from 'node:fs';
import { isRyeError, RyeError } from '@ryeos/lillux';
import { threadDir } from '../persistence/paths.js';
import { USD_EPSILON } from '../store/index.js';
import type { ThreadStore } from '../store/types.js';
import { makeThreadId } from '../thread-id.js';
import type { ParentFacts } from './parent.js';
import { fail } from './setup-failure.js';

/** The first id from now on that the registry, the ledger and the state folder do not hold. */
async function freeThreadId(store: ThreadStore, directiveId: string, stateRoot: string): Promise<string> {
  for (let stamp = Date.now(); ; stamp += 1) {
    const candidate = makeThreadId(directiveId, stamp);
    // The ledger is asked too: a repository can ship rows for the ids to come (they are predictable).
    if ((await store.registry.exists(candidate)) || (await store.ledger.get(candidate)) !== undefined)
      continue;
    try {
      if (existsSync(threadDir(stateRoot, candidate))) continue;
    } catch {
      // an id whose folder cannot be checked is as free as the registry says
    }
    return candidate;
  }
}

/** Registers a new thread under a free id and returns the id. */
export async function registerThread(
  store: ThreadStore,
  directiveId: string,
  parentId: string | undefined,
  stateRoot: string,
): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const id = await freeThreadId(store, directiveId, stateRoot);
    try {
      await store.registry.register(id, directiveId, parentId ?? null);
      return id;
    } catch (error) {
      // Another process took the same millisecond between the check and the insert.
      if (isRyeError(error) && error.details.reason === 'thread_exists') continue;
      throw error;
    }
  }
  throw new RyeError('INTERNAL', `Could not register a thread id for ${directiveId}`);
}

/** Refuses a child whose parent has used up its spawns, before anything is written. */
export async function checkSpawnRoom(store: ThreadStore, parentId: string, max: number): Promise<void> {
  const count = (await store.registry.getThread(parentId))?.spawn_count ?? 0;
  if (count >= max) fail('LIMIT', `Spawn limit exceeded for parent ${parentId}: ${count}/${max}`);
}

/** Refuses a child its parent cannot afford, before anything is written. */
export async function checkBudgetRoom(store: ThreadStore, parentId: string, amount: number): Promise<void> {
  const remaining = await store.ledger.getRemaining(parentId);
  if (remaining + USD_EPSILON < amount) {
    fail(
      'LIMIT',
      `Budget reservation failed: parent ${parentId} has $${Math.max(0, remaining).toFixed(4)} left, the child needs $${amount.toFixed(4)}`,
      "Lower the child's <limits spend>, or give its parent a larger spend limit.",
    );
  }
}

/**
 * The fork's writes after its row: the parent's spawn slot and the budget. A sibling can take
 * the last slot or the budget between the checks and here, so a refusal undoes the slot and
 * the row, leaving nothing behind.
 */
export async function claimSlotAndBudget(
  store: ThreadStore,
  threadId: string,
  parent: ParentFacts | undefined,
  spawnMax: number | undefined,
  spendLimit: number,
  unregister: () => Promise<void>,
): Promise<void> {
  let slotTaken = false;
  try {
    if (parent && spawnMax !== undefined) {
      if (!(await store.registry.tryIncrementSpawn(parent.threadId, spawnMax))) {
        fail('LIMIT', `Spawn limit exceeded for parent ${parent.threadId}: ${spawnMax}/${spawnMax}`);
      }
      slotTaken = true;
    }
    if (parent) {
      try {
        await store.ledger.reserve(threadId, spendLimit, parent.threadId, spendLimit);
      } catch (error) {
        fail('LIMIT', `Budget reservation failed: ${(error as Error).message}`);
      }
    } else {
      await store.ledger.register(threadId, spendLimit);
    }
  } catch (error) {
    try {
      if (slotTaken && parent) await store.registry.releaseSpawn(parent.threadId);
      await unregister();
    } catch {
      // The refusal below is what the caller needs; a row left behind is marked `error`.
    }
    throw error;
  }
}

/** Ends a reservation still active (a thread that will not run on), charging what it recorded spent. Never throws. */
export async function releaseReservation(store: ThreadStore, threadId: string): Promise<void> {
  try {
    await store.ledger.end(threadId, 'error');
  } catch {
    // The registry still records the failure.
  }
}

export type BudgetOutcome = 'completed' | 'error' | 'cancelled';

/**
 * A running thread's reservation, ended exactly once: settled with its spend when the thread
 * finalizes, or released when it fails before that.
 */
export class Reservation {
  private ended = false;

  constructor(
    private readonly store: ThreadStore,
    private readonly threadId: string,
  ) {}

  /** Ends it without a final spend: what the ledger recorded spent is charged to the parent. */
  async release(outcome: BudgetOutcome): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.store.ledger.end(this.threadId, outcome);
  }

  async settle(ownSpend: number, outcome: BudgetOutcome): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.store.ledger.settle(this.threadId, ownSpend, outcome);
  }
}

/**
 * A fork's registry row, taken only once its request is known to be valid (a refused fork
 * leaves no row or folder). A handoff's continuation already has its row, which a setup failure
 * must mark but never delete.
 */
export class Registration {
  private id: string | undefined;

  constructor(
    private readonly store: ThreadStore,
    private readonly directiveId: string,
    private readonly parentId: string | undefined,
    private readonly stateRoot: string,
    private readonly preRegisteredId: string | undefined,
  ) {
    this.id = preRegisteredId;
  }

  /** The row this fork holds, if any (the one a failure is recorded on). */
  get threadId(): string | undefined {
    return this.id;
  }

  // Arrow properties: both are handed on as callbacks, and an unbound method once left a refused
  // child's row behind (its `this` was gone, and the undo that failed is best effort).
  readonly register = async (): Promise<string> => {
    this.id =
      this.preRegisteredId ??
      (await registerThread(this.store, this.directiveId, this.parentId, this.stateRoot));
    return this.id;
  };

  /** Takes back a row this fork registered (a refusal after registration). */
  readonly unregister = async (): Promise<void> => {
    if (this.id && !this.preRegisteredId && (await this.store.registry.unregister(this.id)))
      this.id = undefined;
  };
}
