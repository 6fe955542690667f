/**
 * What bounds a graph run: nesting depth (a graph that runs itself), error-hook retries (each a
 * step under max_steps, counted per node name, `__proto__` included), the bytes a step stores,
 * and `capabilities: []`.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outcomeOf, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();

describe('state graphs: limits', () => {
  it('a graph that runs itself stops at the nesting limit with a LIMIT error; the leaf never runs', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/rec',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: check
  nodes:
    check:
      type: gate
      next:
        - {to: deeper, when: {path: inputs.next, op: exists}}
        - {to: leaf}
    deeper: {action: {item_id: "tool:acme/graphs/rec", params: {next: "\${inputs.next.next}"}}, next: done}
    leaf: {action: {item_id: "tool:acme/step", params: {label: leaf, log: "${f.log}"}}, next: done}
    done: {type: return, output: {}}
`,
    );
    let nested: Record<string, unknown> = {};
    for (let i = 0; i < 7; i++) nested = { next: nested };
    const out = outcomeOf(await f.run('acme/graphs/rec', nested));
    expect(out.success).toBe(false);
    expect(JSON.stringify(out)).toContain('at most 5 may be');
    expect(f.logged()).toEqual([]);
    // Within the limit it runs to its leaf.
    const shallow = outcomeOf(await f.run('acme/graphs/rec', { next: { next: {} } }));
    expect(shallow, JSON.stringify(shallow)).toMatchObject({ success: true });
    expect(f.logged()).toEqual(['leaf']);
    // A caller's depth parameter only ever counts deeper.
    const deep = outcomeOf(await f.run('acme/graphs/rec', { depth: 5 }));
    expect(deep).toMatchObject({ success: false, error_type: 'limit' });
  }, 120_000);

  it('error-hook retries are steps under max_steps, whatever max_retries the hook answers', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/retry',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: flaky
  max_steps: 2
  hooks:
    - {event: error, action: {item_id: "tool:acme/step", params: {answer: {action: retry, max_retries: "\${state.inputs.n}"}}}}
  nodes:
    flaky: {action: {item_id: "tool:acme/step", params: {label: try, log: "${f.log}", fail: nope}}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/retry', { n: 25 }));
    expect(out.success).toBe(false);
    expect(f.logged()).toEqual(['try', 'try']);
  }, 60_000);

  it('a node named __proto__ retries as many times as its hook says, and no more', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/proto',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: __proto__
  max_steps: 10
  hooks:
    - {event: error, action: {item_id: "tool:acme/step", params: {answer: {action: retry, max_retries: 2}}}}
  nodes:
    __proto__: {action: {item_id: "tool:acme/step", params: {label: try, log: "${f.log}", fail: nope}}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/proto'));
    expect(out.success).toBe(false);
    expect(f.logged()).toEqual(['try', 'try', 'try']);
  }, 60_000);

  it('a large input is stored once per run, not once per step', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/spin',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: spin
  max_steps: 12
  state: {n: ""}
  nodes:
    spin: {type: gate, assign: {n: "\${state.n}x"}, next: spin}
`,
    );
    const big = 'a'.repeat(1024 * 1024);
    const out = outcomeOf(await f.run('acme/graphs/spin', { big }));
    expect(String(out.error)).toContain('Max steps exceeded (12)');
    const objects = join(f.project, '.ai/state/objects');
    const bytes = readdirSync(objects, { recursive: true })
      .map((entry) => statSync(join(objects, String(entry))))
      .filter((stat) => stat.isFile())
      .reduce((sum, stat) => sum + stat.size, 0);
    // The input once (and the runtime's own copy of the call), not twelve times.
    expect(bytes).toBeLessThan(3 * big.length);
  }, 60_000);

  it('capabilities: [] grants nothing', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/one',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: step
  nodes:
    step: {action: {item_id: "tool:acme/step", params: {label: ran, log: "${f.log}"}}, next: done}
    done: {type: return, output: {}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/one', { capabilities: [] }));
    expect(out).toMatchObject({ success: false, node: 'step' });
    expect(String(out.error)).toContain('Permission denied');
    expect(f.logged()).toEqual([]);
  }, 60_000);
});
