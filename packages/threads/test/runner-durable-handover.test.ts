/**
 * A dispatch that awaits `beforeEffects` itself gets a tool call at once, while the last
 * checkpoint's fsync still runs: the call's verification overlaps the wait, and the tool still
 * runs only once the checkpoint is on disk. A dispatch without the mark is called only after.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrimaryCall, PrimaryDispatch } from '../src/host.js';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import type { LoopContext } from '../src/runner/loop.js';
import { runLoop } from '../src/runner/loop.js';
import { ResultGuard } from '../src/runner/result-guard.js';
import { type ReplayServer, startReplayServer } from '../src/testing.js';
import { markLoopBase, TWO_MARKS_THEN_RETURN } from './mark-palette.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await dirs.cleanup();
});

/** Runs two marked calls and a return; `order` says what happened when. */
async function runTwoCalls(
  dispatchFor: (order: string[]) => PrimaryDispatch,
  durableFails = false,
): Promise<{ order: string[]; results: string[] }> {
  server = await startReplayServer(TWO_MARKS_THEN_RETURN);
  const dir = await dirs.make('rye-handover-');
  const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), 'acme/t/t-1', testKey().signer);
  const order: string[] = [];
  const results: string[] = [];
  let disk: Promise<void> = Promise.resolve();
  const ctx: LoopContext = {
    ...markLoopBase(server.url),
    log: {
      emit: (type, payload) => {
        if (type === 'tool_call_result') results.push(String(payload.output));
        writer.write(type, payload);
      },
      checkpoint: (turn) => {
        writer.checkpointInBackground(turn);
        order.push(`checkpoint ${turn}`);
        // A slow disk: this checkpoint is durable (or fails to be) 300 ms from now.
        disk = new Promise((resolve, reject) =>
          setTimeout(() => {
            order.push(`durable ${turn}`);
            if (durableFails) reject(new Error('the disk is gone'));
            else resolve();
          }, 300),
        );
        disk.catch(() => undefined);
      },
      durable: () => disk,
    },
    hooks: { control: async () => null },
    permission: { check: () => undefined },
    dispatch: dispatchFor(order),
    guard: new ResultGuard(join(dir, 'artifacts')),
    checkLimits: () => undefined,
    classifyError: () =>
      ({ category: 'transient', retryable: true, retry_policy: { type: 'none' } }) as never,
    retryDelay: () => 0,
    isCancelled: () => false,
    onSpend: () => undefined,
    onCostSnapshot: () => undefined,
  };
  await runLoop(ctx);
  writer.close();
  await writer.durable().catch(() => undefined);
  return { order: order.filter((step) => !step.startsWith('durable 2')), results };
}

/** A dispatch that prepares at once and awaits `beforeEffects` before the tool runs. */
const awaiting = (order: string[]): PrimaryDispatch =>
  Object.assign(
    async (call: PrimaryCall) => {
      const tag = (call.args.parameters as { tag: string }).tag;
      order.push(`prepare ${tag}`);
      try {
        await call.beforeEffects?.();
      } catch (error) {
        return { status: 'error', error: (error as Error).message };
      }
      order.push(`run ${tag}`);
      return { status: 'success', type: 'tool', item_id: 'tool:acme/mark', data: { tag } };
    },
    { awaitsBeforeEffects: true },
  );

describe('a tool call handed to a dispatch that awaits durability itself', () => {
  it('is prepared while the checkpoint fsync runs, and runs only once it is on disk', async () => {
    const { order } = await runTwoCalls(awaiting);
    expect(order).toEqual([
      'prepare a',
      'run a',
      'checkpoint 1',
      'prepare b',
      'durable 1',
      'run b',
      'checkpoint 2',
    ]);
  }, 20_000);

  it('never runs when the checkpoint cannot be made durable: the model reads why', async () => {
    const { order, results } = await runTwoCalls(awaiting, true);
    expect(order).toContain('prepare b');
    expect(order).not.toContain('run b');
    expect(results[1]).toContain('the disk is gone');
  }, 20_000);

  it('a dispatch without the mark is not called before the checkpoint is on disk', async () => {
    const plain = (order: string[]): PrimaryDispatch => {
      const inner = awaiting(order);
      return (call) => inner(call);
    };
    const { order } = await runTwoCalls(plain);
    expect(order.indexOf('prepare b')).toBeGreaterThan(order.indexOf('durable 1'));
  }, 20_000);
});
