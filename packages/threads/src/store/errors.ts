/**
 * The thread store's typed failures. Each is a `RyeError` (so boundaries render it like any other
 * error) and a class of its own, so the runner can tell "over budget" from "ledger busy" with
 * `instanceof`; `details.reason` says the same thing for callers that only see the envelope.
 */
import { RyeError } from '@ryeos/lillux';

/** A budget operation named a thread that has no ledger row (its parent never registered). */
export class BudgetNotRegistered extends RyeError {
  readonly threadId: string;

  constructor(threadId: string) {
    super('NOT_FOUND', `Budget reservation failed: thread ${threadId} has no budget ledger entry`, {
      hint: 'Register the root thread (ledger.register) or reserve the parent before spawning children from it.',
      details: { reason: 'budget_not_registered', thread_id: threadId },
    });
    this.threadId = threadId;
  }
}

/** The parent cannot cover a child's reservation: remaining < requested. */
export class InsufficientBudget extends RyeError {
  readonly parentId: string;
  readonly remaining: number;
  readonly requested: number;

  constructor(parentId: string, remaining: number, requested: number) {
    super(
      'LIMIT',
      `Budget reservation failed: insufficient budget in ${parentId}: remaining $${usd(remaining)}, requested $${usd(requested)}`,
      {
        hint: 'Give the child a smaller spend limit (limit_overrides.spend) or raise the parent thread\u2019s spend limit.',
        details: { reason: 'insufficient_budget', parent_thread_id: parentId, remaining, requested },
      },
    );
    this.parentId = parentId;
    this.remaining = remaining;
    this.requested = requested;
  }
}

/** SQLite stayed busy past the busy timeout (5 s): another process holds the ledger's write lock. */
export class BudgetLedgerLocked extends RyeError {
  readonly operation: string;

  constructor(operation: string, cause?: unknown) {
    super(
      'UNAVAILABLE',
      `Budget ledger is locked: ${operation} could not get the write lock within the busy timeout`,
      {
        hint: 'Another thread process holds budget_ledger.db; retry, or look for a stuck process writing to .ai/state/threads/.',
        details: { reason: 'budget_ledger_locked', operation },
        cause,
      },
    );
    this.operation = operation;
  }
}

/** The registry already has this thread id (ids are unique; `makeThreadId` skips taken ones). */
export class ThreadAlreadyRegistered extends RyeError {
  readonly threadId: string;

  constructor(threadId: string, cause?: unknown) {
    super('VALIDATION', `Thread ${threadId} is already registered`, {
      hint: 'Pick a fresh id: makeThreadId(directive, stamp) for the next stamp that await registry.exists(id) answers false for.',
      details: { reason: 'thread_exists', thread_id: threadId },
      cause,
    });
    this.threadId = threadId;
  }
}

/** SQLite stayed busy past the busy timeout (5 s) on registry.db. */
export class ThreadRegistryLocked extends RyeError {
  readonly operation: string;

  constructor(operation: string, cause?: unknown) {
    super(
      'UNAVAILABLE',
      `Thread registry is locked: ${operation} could not get the write lock within the busy timeout`,
      {
        hint: 'Another thread process holds registry.db; retry, or look for a stuck process writing to .ai/state/threads/.',
        details: { reason: 'thread_registry_locked', operation },
        cause,
      },
    );
    this.operation = operation;
  }
}

/** Dollar amounts in messages: cents for ordinary values, more digits when a value is tiny. */
function usd(value: number): string {
  if (value !== 0 && Math.abs(value) < 0.01) return String(Number(value.toPrecision(4)));
  return value.toFixed(2);
}
