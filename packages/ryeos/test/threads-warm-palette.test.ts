/**
 * A thread starts the warm workers of its palette's function tools when it starts: the worker
 * that answers a tool's first call was already running before the model asked for the call.
 * Only palette tools are warmed, and the thread's end stops no worker (the host's, shared).
 */
import { warmWorkerCount } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const tool = (description: string) => `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = '${description}';
export const CONFIG_SCHEMA = { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] };

export async function execute(params) {
  // When this worker process started (epoch ms): before or after the model asked for the call.
  return { success: true, tag: params.tag, workerStartedAt: Math.round(performance.timeOrigin) };
}
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/warm.js', tool('Report when its worker started'));
  await fx.write('.ai/tools/acme/unused.js', tool('A function tool the directive does not grant'));
  await fx.sign('tool:acme/warm');
  await fx.sign('tool:acme/unused');
  await fx.write(
    '.ai/directives/acme/warmer.md',
    directive('warmer', {
      metadata: '<permissions><execute><tool>acme.warm</tool></execute></permissions>',
      outputs: '<output name="answer" required="true">Anything</output>',
    }),
  );
  await fx.sign('directive:acme/warmer');
});

describe('palette workers start with the thread', () => {
  it("a palette function tool's worker runs before the model asks for the tool's first call", async () => {
    const before = warmWorkerCount();
    const server = await fixture().serve({
      turns: [
        // A first answer without calls; the tool is only asked for in the second.
        { text: 'Thinking first.', hold_before_final_ms: 1500 },
        { tool_calls: [{ name: 'acme_warm', id: 'toolu_w', input: { tag: 'w' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'ok' } }] },
      ],
    });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/warmer', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success', outputs: { answer: 'ok' } });
    const body = JSON.stringify(server.requests[2]!.body);
    const startedAt = Number(body.match(/workerStartedAt\\?":(\d+)/)?.[1]);
    expect(startedAt).toBeGreaterThan(0);
    // The second request is where the model first asks for the call.
    expect(startedAt).toBeLessThan(server.requests[1]!.receivedAt);
    // One worker for the one palette tool (the ungranted tool got none), still alive after the end.
    expect(warmWorkerCount()).toBe(before + 1);
  }, 30_000);
});
