import { describe, expect, it } from 'vitest';
import { outcomeOf, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();

describe('state graphs: walking', () => {
  it('branches on a condition over the assigned state', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/branch',
      `permissions: [rye.execute.tool.acme.*]
config_schema: {type: object, properties: {value: {type: integer, default: 7}}}
config:
  start: first
  nodes:
    first:
      action: {item_id: "tool:acme/step", params: {label: first, value: "\${inputs.value}", log: "${f.log}"}}
      assign: {seen: "\${result.value}"}
      next:
        - {to: big, when: {path: state.seen, op: gt, value: 5}}
        - {to: small}
    big:
      action: {item_id: "tool:acme/step", params: {label: big, log: "${f.log}"}}
      next: done
    small:
      action: {item_id: "tool:acme/step", params: {label: small, log: "${f.log}"}}
      next: done
    done: {type: return, output: {seen: "\${state.seen}", note: "saw \${state.seen}"}}
`,
    );
    const envelope = await f.run('acme/graphs/branch');
    const out = outcomeOf(envelope);
    expect(out, JSON.stringify(envelope)).toMatchObject({
      success: true,
      status: 'completed',
      output: { seen: 7, note: 'saw 7' },
      steps: 3,
    });
    expect(f.logged()).toEqual(['first', 'big']);
    // The run's signed knowledge page verifies and reads as knowledge.
    const page = await f.rye.execute({
      item_id: `knowledge:agent/graphs/acme/graphs/branch/${String(out.graph_run_id)}`,
    });
    expect(page.status, JSON.stringify(page)).toBe('success');
    expect(JSON.stringify(page)).toContain('| 2 | big | running |');
    const small = outcomeOf(await f.run('acme/graphs/branch', { value: 2 }));
    expect(small).toMatchObject({ success: true, output: { seen: 2 } });
    expect(f.logged()).toEqual(['first', 'big', 'first', 'small']);
  }, 60_000);

  it('runs foreach sequentially over state, then in parallel, collecting every result in order', async () => {
    const f = fx();
    const barrier = `${f.root}/barrier`;
    await f.graph(
      'acme/graphs/fanout',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: seq
  state: {names: [a, b, c]}
  nodes:
    seq:
      type: foreach
      over: "\${state.names}"
      as: name
      action: {item_id: "tool:acme/step", params: {label: "seq-\${name}", log: "${f.log}"}}
      collect: sequential
      next: par
    par:
      type: foreach
      over: "\${state.names}"
      parallel: true
      action: {item_id: "tool:acme/step", params: {label: "\${item}", barrier: "${barrier}", peers: 3}}
      collect: parallel
      next: done
    done: {type: return, output: {seq: "\${state.sequential}", par: "\${state.parallel}"}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/fanout'));
    expect(out.success, JSON.stringify(out)).toBe(true);
    expect(f.logged()).toEqual(['seq-a', 'seq-b', 'seq-c']);
    const output = out.output as { seq: Array<{ label: string }>; par: Array<{ label: string }> };
    expect(output.seq.map((r) => r.label)).toEqual(['seq-a', 'seq-b', 'seq-c']);
    // The barrier lets an iteration through only once all three are running at the same time.
    expect(output.par.map((r) => r.label)).toEqual(['a', 'b', 'c']);
  }, 90_000);

  it('sends a failed node to its on_error node, and continue records the error and goes on', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/recover',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: risky
  nodes:
    risky:
      action: {item_id: "tool:acme/step", params: {label: risky, fail: "boom", log: "${f.log}"}}
      assign: {never: true}
      on_error: recover
      next: done
    recover: {type: gate, assign: {failed: "\${state._last_error.error}"}, next: shrug}
    shrug:
      action: {item_id: "tool:acme/step", params: {fail: "again"}}
      on_error: continue
      next: done
    done: {type: return, output: {failed: "\${state.failed}", never: "\${state.never}"}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/recover'));
    expect(out, JSON.stringify(out)).toMatchObject({
      success: true,
      status: 'completed_with_errors',
      output: { failed: 'boom', never: null },
      errors_suppressed: 1,
    });
  }, 60_000);

  it('a failing node with on_error fail ends the run as an error naming the node', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/fails',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: risky
  nodes:
    risky:
      action: {item_id: "tool:acme/step", params: {fail: "bad input"}}
      next: done
    done: {type: return}
`,
    );
    const envelope = await f.run('acme/graphs/fails');
    expect(envelope.status).toBe('error');
    expect(outcomeOf(envelope)).toMatchObject({
      success: false,
      status: 'error',
      node: 'risky',
      error: 'bad input',
    });
  }, 60_000);

  it('max_steps stops a loop', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/loop',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: spin
  max_steps: 4
  nodes:
    spin:
      action: {item_id: "tool:acme/step", params: {label: spin, log: "${f.log}"}}
      next: spin
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/loop'));
    expect(out).toMatchObject({ success: false, status: 'error', error: 'Max steps exceeded (4)', steps: 4 });
    expect(f.logged()).toEqual(['spin', 'spin', 'spin', 'spin']);
  }, 60_000);

  it('refuses a graph with a missing next target, a missing start or an unbounded cycle before anything runs', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/broken',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: nowhere
  nodes:
    a:
      action: {item_id: "tool:acme/step", params: {label: a, log: "${f.log}"}}
      colour: blue
      next: ghost
    b: {type: gate, next: c}
    c: {type: gate, next: b}
`,
    );
    const envelope = await f.run('acme/graphs/broken');
    expect(envelope.status).toBe('error');
    const error = String(outcomeOf(envelope).error);
    expect(error).toContain("start node 'nowhere' does not exist");
    expect(error).toContain("next names missing node 'ghost'");
    expect(error).toContain('cycle but sets no config.max_steps');
    expect(f.logged()).toEqual([]);
    const report = outcomeOf(await f.run('acme/graphs/broken', { validate: true }));
    expect(report.success).toBe(false);
    expect(report.warnings).toEqual(expect.arrayContaining(["node 'a': unknown key 'colour' is ignored"]));
    expect(report.node_count).toBe(3);
  }, 60_000);

  it('checks inputs against config_schema and never lets an action outside the permissions run', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/narrow',
      `permissions: [rye.execute.tool.rye.file-system.*]
config_schema: {type: object, properties: {count: {type: integer}}, required: [count]}
config:
  start: step
  nodes:
    step:
      action: {item_id: "tool:acme/step", params: {label: step, log: "${f.log}"}}
`,
    );
    const bad = outcomeOf(await f.run('acme/graphs/narrow', { count: 'many' }));
    expect(String(bad.error)).toMatch(/count/);
    const denied = outcomeOf(await f.run('acme/graphs/narrow', { count: 1 }));
    expect(denied).toMatchObject({ success: false, node: 'step' });
    expect(String(denied.error)).toContain("Permission denied: 'rye.execute.tool.acme.step'");
    expect(f.logged()).toEqual([]);
  }, 60_000);

  it('runs its hooks: an error hook answering retry re-runs the node; after_step and graph_completed fire', async () => {
    const f = fx();
    const counter = `${f.root}/calls`;
    await f.graph(
      'acme/graphs/hooked',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: flaky
  hooks:
    - {event: error, condition: {path: node, op: eq, value: flaky}, action: {item_id: "tool:acme/step", params: {label: "retry \${error}", log: "${f.log}", answer: {action: retry, max_retries: 3}}}}
    - {event: after_step, condition: {path: step_count, op: gte, value: 2}, action: {item_id: "tool:acme/step", params: {label: "after \${node}", log: "${f.log}"}}}
    - {event: graph_completed, action: {item_id: "tool:acme/step", params: {label: "completed \${status}", log: "${f.log}"}}}
  nodes:
    flaky:
      action: {item_id: "tool:acme/step", params: {label: flaky, log: "${f.log}", counter: "${counter}", fail_times: 2}}
      next: calm
    calm: {type: gate, next: done}
    done: {type: return, output: {retries: "\${state._retries}"}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/hooked'));
    expect(out, JSON.stringify(out)).toMatchObject({
      success: true,
      status: 'completed',
      output: { retries: { flaky: 2 } },
    });
    expect(f.logged()).toEqual([
      'flaky',
      'retry flaky failure 1',
      'flaky',
      'retry flaky failure 2',
      'flaky',
      // Each retry is a step: flaky ends at step 3, so after_step (step_count >= 2) fires for it.
      'after flaky',
      'after calm',
      'completed completed',
    ]);
  }, 60_000);

  it("a graph's chain is graph → the state-graph runtime → the subprocess primitive, each verified", async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/dry',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: done
  nodes:
    done: {type: return}
`,
    );
    f.refresh();
    const dry = await f.rye.execute({ item_id: 'tool:acme/graphs/dry', dry_run: true });
    expect(dry).toMatchObject({
      status: 'validation_passed',
      chain: ['acme/graphs/dry', 'rye/core/runtimes/state-graph/runtime', 'rye/core/primitives/subprocess'],
    });
  }, 30_000);
});
