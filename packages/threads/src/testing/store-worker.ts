/**
 * One process of the store conformance suite's races (see store-conformance.ts). argv[2] is a JSON
 * `WorkerJob`. The worker opens the store through the target's module, prints `ready`, waits for a
 * line on stdin (so every worker starts at the same moment), runs its job, prints one JSON line.
 */
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type { ThreadStore } from '../store/types.js';

export type WorkerJob =
  | { kind: 'spawn'; parent: string; max: number; attempts: number }
  | {
      kind: 'budget';
      parent: string;
      worker: number;
      attempts: number;
      reserve: number;
      turns: number;
      spendPerTurn: number;
    }
  | { kind: 'hold'; parent: string; worker: number; reserve: number; ms: number; holdMs: number }
  | { kind: 'write'; threadId: string };

export interface WorkerRequest {
  /** A module (path or file URL) exporting `openStore(shared): Promise<ThreadStore>`. */
  module: string;
  shared: unknown;
  job: WorkerJob;
}

/** The ledger's refusal of a reservation the parent cannot afford (`InsufficientBudget`). */
function isInsufficient(error: unknown): boolean {
  return (error as { details?: { reason?: unknown } } | null)?.details?.reason === 'insufficient_budget';
}

async function run(store: ThreadStore, job: WorkerJob): Promise<Record<string, unknown>> {
  const { registry, ledger } = store;
  switch (job.kind) {
    case 'spawn': {
      // Many attempts at one parent's spawn slot: the store must grant exactly `max`.
      let granted = 0;
      for (let i = 0; i < job.attempts; i++)
        if (await registry.tryIncrementSpawn(job.parent, job.max)) granted++;
      return { granted };
    }
    case 'budget': {
      // The runner's child lifecycle against one shared parent: reserve, spend per turn, settle.
      const completed: string[] = [];
      let refused = 0;
      for (let i = 0; i < job.attempts; i++) {
        const child = `${job.parent}/w${job.worker}-${i}`;
        try {
          await ledger.reserve(child, job.reserve, job.parent);
        } catch (error) {
          if (!isInsufficient(error)) throw error;
          refused++;
          continue;
        }
        for (let turn = 0; turn < job.turns; turn++) await ledger.incrementActual(child, job.spendPerTurn);
        await ledger.settle(child, job.spendPerTurn * job.turns, 'completed');
        completed.push(child);
      }
      return { completed, refused };
    }
    case 'hold': {
      // Reserve a slice of a parent that fits only a few at once, hold it, release it; right
      // after each grant the parent must not be over-reserved.
      let granted = 0;
      let refused = 0;
      const overReserved: number[] = [];
      const until = Date.now() + job.ms;
      for (let i = 0; Date.now() < until; i++) {
        const child = `${job.parent}/h${job.worker}-${i}`;
        try {
          await ledger.reserve(child, job.reserve, job.parent);
        } catch (error) {
          if (!isInsufficient(error)) throw error;
          refused++;
          continue;
        }
        granted++;
        const remaining = await ledger.getRemaining(job.parent);
        if (remaining < -1e-9) overReserved.push(remaining);
        await new Promise((resolve) => setTimeout(resolve, job.holdMs));
        await ledger.release(child, 'completed');
      }
      return { granted, refused, overReserved };
    }
    case 'write':
      await registry.register(job.threadId, 'conformance');
      await registry.updateStatus(job.threadId, 'completed');
      return { written: job.threadId };
  }
}

const request = JSON.parse(process.argv[2] ?? '{}') as WorkerRequest;
const lines = createInterface({ input: process.stdin });
// The store is opened before `ready`, so the job's clock starts at the same moment in every
// worker, however long a store takes to load and connect.
const target = (await import(
  request.module.startsWith('file:') ? request.module : pathToFileURL(request.module).href
)) as { openStore(shared: unknown): Promise<ThreadStore> };
const store = await target.openStore(request.shared);
process.stdout.write('ready\n');
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
try {
  const result = await run(store, request.job);
  process.stdout.write(`${JSON.stringify({ pid: process.pid, ...result })}\n`);
} finally {
  await store.close();
}
