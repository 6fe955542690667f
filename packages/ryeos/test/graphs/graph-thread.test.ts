import { describe, expect, it } from 'vitest';
import { directive } from '../threads-helpers.js';
import { type GraphFixture, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();

/** A directive whose thread may execute `cap` and calls the graph once, then answers. */
async function threadRunningGraph(f: GraphFixture, name: string, cap: string) {
  await f.write(
    `.ai/directives/acme/${name}.md`,
    directive(name, {
      metadata: `    <model tier="fast" provider="anthropic"/>\n    <limits turns="4" spend="0.5"/>\n    <permissions><execute><tool>${cap}</tool></execute></permissions>`,
    }),
  );
  await f.sign(`directive:acme/${name}`);
}

describe('state graphs inside a managed thread', () => {
  it("cannot run an action the thread's capabilities deny, though the graph's permissions allow it", async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/guarded',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: step
  nodes:
    step: {action: {item_id: "tool:acme/step", params: {label: step, log: "${f.log}"}}}
`,
    );
    await threadRunningGraph(f, 'narrow', 'acme.graphs.*');
    await threadRunningGraph(f, 'wide', 'acme.*');
    const call = { name: 'rye_execute', input: { item_id: 'tool:acme/graphs/guarded' } };
    const server = await f.serve({
      turns: [{ tool_calls: [call] }, { text: 'done' }, { tool_calls: [call] }, { text: 'done' }],
    });
    const narrow = await f.rye.execute({ item_id: 'directive:acme/narrow', thread: 'fork' });
    expect(narrow.status, JSON.stringify(narrow)).not.toBe('error');
    const seen = JSON.stringify(server.requests[1]!.body);
    expect(seen).toContain("Permission denied: 'rye.execute.tool.acme.step'");
    expect(f.logged()).toEqual([]);
    // The same graph from a thread that holds acme.* runs its action.
    const wide = await f.rye.execute({ item_id: 'directive:acme/wide', thread: 'fork' });
    expect(wide.status, JSON.stringify(wide)).not.toBe('error');
    expect(f.logged()).toEqual(['step']);
  }, 120_000);
});
