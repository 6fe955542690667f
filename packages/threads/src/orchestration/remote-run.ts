/**
 * A remote run a thread starts (`target: "remote"`, sync or async) is that thread's child like a
 * local one: it takes a spawn, reserves its spend from what the thread has left, and is charged
 * what the server reports it spent. The limits sent to the server never exceed that reservation
 * or the thread's remaining time, so a model cannot buy a larger run by sending it elsewhere.
 */
import { RyeError } from '@ryeos/lillux';
import type { Trust } from '../persistence/signer.js';
import { USD_EPSILON } from '../store/index.js';
import type { ThreadStore } from '../store/types.js';
import { admitToolRun } from './tool-run.js';

export interface RemoteRunAdmission {
  /** Epoch ms at which the parent's duration ends (Infinity when it has none). */
  deadline: number;
  /** The USD reserved for the run from the parent (what the server may spend). */
  spend: number;
  /** The limit overrides to send: the caller's, capped by the reservation and the time left. */
  limitOverrides: Record<string, unknown>;
}

/**
 * Admits a remote run of `parentThreadId` under the ledger id `childId`: spawn slot and duration
 * as for an async tool run, then its spend reserved. A run that names a spend (the directive's
 * `<limits spend>` or `limit_overrides.spend`, capped by the parent's limit, as a local child's)
 * is refused when the parent has less left, like a local child; one that names none gets what
 * the parent has left.
 */
export async function admitRemoteRun(options: {
  store: ThreadStore;
  projectPath: string;
  parentThreadId: string;
  childId: string;
  trust: Trust;
  limitOverrides?: Record<string, unknown>;
  /** The directive's own `<limits>`, as the client read it from the signed directive. */
  directiveLimits?: Record<string, unknown>;
}): Promise<RemoteRunAdmission> {
  const { store, parentThreadId } = options;
  const { deadline, parentLimits } = await admitToolRun(options);
  try {
    const remaining = await store.ledger.getRemaining(parentThreadId);
    const asked = askedSpend(options.directiveLimits, options.limitOverrides, parentLimits);
    if (asked !== undefined && remaining + USD_EPSILON < asked) {
      throw new RyeError(
        'LIMIT',
        `Budget reservation failed: parent ${parentThreadId} has $${Math.max(0, remaining).toFixed(4)} left, the child needs $${asked.toFixed(4)}`,
        {
          hint: "Lower the child's <limits spend> (or limit_overrides.spend), or give its parent a larger spend limit.",
          details: {
            reason: 'insufficient_budget',
            parent_thread_id: parentThreadId,
            remaining,
            requested: asked,
          },
        },
      );
    }
    const spend = Math.max(0, asked ?? remaining);
    if (spend <= USD_EPSILON) {
      throw new RyeError(
        'LIMIT',
        `Budget reservation failed: parent ${parentThreadId} has $${Math.max(0, remaining).toFixed(4)} left for a remote run`,
        { hint: 'A remote run is paid from the thread’s spend: give the thread a larger spend limit.' },
      );
    }
    await store.ledger.reserve(options.childId, spend, parentThreadId, spend);
    return { deadline, spend, limitOverrides: cappedOverrides(options.limitOverrides, spend, deadline) };
  } catch (error) {
    // The spawn taken above goes back: a refused run is no child.
    await store.registry.releaseSpawn(parentThreadId).catch(() => undefined);
    if ((error as { code?: string }).code === 'LIMIT') throw error;
    throw new RyeError('LIMIT', `Budget reservation failed: ${(error as Error).message}`, {
      hint: 'A remote run is paid from the thread’s spend: give the thread a larger spend limit.',
    });
  }
}

/** A spend limit as a number, when it is one (a directive's attribute is a string). */
function spendOf(limits: Record<string, unknown> | undefined): number | undefined {
  const value = limits?.spend;
  if (value === undefined || value === null || value === '') return undefined;
  const spend = Number(value);
  return Number.isFinite(spend) && spend >= 0 ? spend : undefined;
}

/**
 * What the child asks, as a local child's spend resolves: the directive's spend, lowered (never
 * raised) by the override, capped by the parent's limit. Undefined when neither names one.
 */
function askedSpend(
  directive: Record<string, unknown> | undefined,
  overrides: Record<string, unknown> | undefined,
  parent: Record<string, unknown>,
): number | undefined {
  const own = spendOf(directive);
  const override = spendOf(overrides);
  if (own === undefined && override === undefined) return undefined;
  const parentCap = spendOf(parent);
  return Math.min(own ?? Infinity, override ?? Infinity, parentCap ?? Infinity);
}

function cappedOverrides(
  requested: Record<string, unknown> | undefined,
  spend: number,
  deadline: number,
): Record<string, unknown> {
  const overrides: Record<string, unknown> = { ...requested, spend };
  if (Number.isFinite(deadline)) {
    const left = Math.max(1, Math.floor((deadline - Date.now()) / 1000));
    const asked = Number(requested?.duration_seconds);
    overrides.duration_seconds = Number.isFinite(asked) && asked > 0 ? Math.min(asked, left) : left;
  }
  return overrides;
}

/**
 * Ends a remote run's reservation: charged what the server reported (at most the reservation),
 * or the whole reservation when the report is missing or not a number, so a run never costs less
 * than the client can account for.
 */
export async function settleRemoteRun(
  store: ThreadStore,
  childId: string,
  reported: unknown,
  outcome: 'completed' | 'error' | 'cancelled',
): Promise<void> {
  const row = await store.ledger.get(childId);
  if (row?.status !== 'active') return;
  const spent = Number(reported);
  const charge =
    Number.isFinite(spent) && spent >= 0 ? Math.min(spent, row.reserved_spend) : row.reserved_spend;
  await store.ledger.settle(childId, charge, outcome);
}
