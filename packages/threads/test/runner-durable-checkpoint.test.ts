/**
 * A turn's checkpoint may leave its fsync running while the next model request goes out, but no
 * tool call of the next turn runs before it is on disk: resume relies on the results before a
 * checkpoint being durable before anything that follows them has an effect.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrimaryCall } from '../src/host.js';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import { verifyTranscript } from '../src/persistence/transcript-verify.js';
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

describe('checkpoints made durable in the background', () => {
  it("a tool call of the next turn waits for the last checkpoint's fsync", async () => {
    server = await startReplayServer(TWO_MARKS_THEN_RETURN);
    const dir = await dirs.make('rye-durable-');
    const { signer } = testKey();
    const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), 'acme/t/t-1', signer);
    const order: string[] = [];
    let disk: Promise<void> = Promise.resolve();
    const ctx: LoopContext = {
      ...markLoopBase(server.url),
      log: {
        emit: (type, payload) => writer.write(type, payload),
        checkpoint: (turn) => {
          writer.checkpointInBackground(turn);
          order.push(`checkpoint ${turn}`);
          // A slow disk: this checkpoint is durable 300 ms from now.
          disk = new Promise((resolve) =>
            setTimeout(() => {
              order.push(`durable ${turn}`);
              resolve();
            }, 300),
          );
        },
        durable: () => disk,
      },
      hooks: { control: async () => null },
      permission: { check: () => undefined },
      dispatch: async (call: PrimaryCall) => {
        const tag = (call.args.parameters as { tag: string }).tag;
        order.push(`run ${tag}`);
        return { status: 'success', type: 'tool', item_id: 'tool:acme/mark', data: { tag } };
      },
      guard: new ResultGuard(join(dir, 'artifacts')),
      checkLimits: () => undefined,
      classifyError: () =>
        ({ category: 'transient', retryable: true, retry_policy: { type: 'none' } }) as never,
      retryDelay: () => 0,
      isCancelled: () => false,
      onSpend: () => undefined,
      onCostSnapshot: () => undefined,
    };
    const { result, timing } = await runLoop(ctx);
    writer.close();
    await writer.durable();
    expect(result.success).toBe(true);
    // The runner's own time, one figure per turn (the bench compares early turns with late ones).
    expect(timing.runner_ms_by_turn).toHaveLength(3);
    for (const ms of timing.runner_ms_by_turn) expect(ms).toBeGreaterThanOrEqual(0);
    expect(order.filter((step) => !step.startsWith('durable 2'))).toEqual([
      'run a',
      'checkpoint 1',
      'durable 1',
      'run b',
      'checkpoint 2',
    ]);
  }, 20_000);

  it('a background checkpoint verifies like any other, and the writer closes while its fsync runs', async () => {
    const dir = await dirs.make('rye-durable-');
    const { signer, trust } = testKey();
    const path = join(dir, 'transcript.jsonl');
    const writer = new TranscriptWriter(path, 'acme/t/t-2', signer);
    writer.write('cognition_in', { text: 'hello', role: 'user', turn: 1 });
    const first = writer.checkpointInBackground(1);
    writer.write('tool_call_result', { call_id: 'c1', output: 'é', turn: 2 });
    writer.checkpointInBackground(2);
    writer.close();
    await writer.durable();
    expect(first.turn).toBe(1);
    expect(await verifyTranscript(path, trust, 'strict')).toEqual({ valid: true, checkpoints: 2 });
  });
});
