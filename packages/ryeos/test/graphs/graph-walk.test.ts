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
    expect(out, JSON.stringify(envelope)).toMatchObject({ success: true, status: 'completed', output: { seen: 7, note: 'saw 7' }, steps: 3 });
    expect(f.logged()).toEqual(['first', 'big']);
    const small = outcomeOf(await f.run('acme/graphs/branch', { value: 2 }));
    expect(small).toMatchObject({ success: true, output: { seen: 2 } });
    expect(f.logged()).toEqual(['first', 'big', 'first', 'small']);
  }, 60_000);
});
