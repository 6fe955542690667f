/**
 * Compatibility with the original RYE's own bundles (issue 10, item 11): `<outputs>` whose
 * children are named by element instead of `<output name=…>`. Fixture written fresh in that form.
 */
import { describe, expect, it } from 'vitest';
import { parseDirective, renderReturns } from '../../src/index.js';

const ORIGINAL_FORM = `<!-- rye:signed:2026-01-01T00:00:00Z:${'0'.repeat(64)}:sig:0123456789abcdef -->
# Spawn Worker

Runs a worker thread and reports back.

\`\`\`xml
<directive name="spawn_worker" version="1.0.0">
  <metadata>
    <description>Spawn a worker thread for a task</description>
    <category>agent/threads</category>
    <author>rye-os</author>
  </metadata>
  <inputs>
    <input name="task" type="string" required="true">What the worker does</input>
  </inputs>
  <outputs>
    <result>The worker's final answer</result>
    <child_thread_id/>
    <cost type="number">Spend of the child in USD</cost>
  </outputs>
</directive>
\`\`\`

Do the task: {input:task}
`;

describe('element-named outputs (original bundles)', () => {
  it('each child of <outputs> is an optional output of that name, its text the description', () => {
    const directive = parseDirective(ORIGINAL_FORM, 'agent/threads/spawn_worker.md');
    expect(directive.outputs).toEqual([
      { name: 'result', type: 'string', required: false, description: "The worker's final answer" },
      { name: 'child_thread_id', type: 'string', required: false },
      { name: 'cost', type: 'number', required: false, description: 'Spend of the child in USD' },
    ]);
    expect(renderReturns(directive.outputs)).toContain('<output name="child_thread_id" />');
  });

  it('mixes with the <output name=…> form, and still refuses nested elements', () => {
    const mixed = ORIGINAL_FORM.replace(
      '<child_thread_id/>',
      '<output name="child_thread_id" required="true"/>',
    );
    expect(parseDirective(mixed, 'agent/threads/spawn_worker.md').outputs[1]).toEqual({
      name: 'child_thread_id',
      type: 'string',
      required: true,
    });
    const nested = ORIGINAL_FORM.replace('<child_thread_id/>', '<child_thread_id><x/></child_thread_id>');
    expect(() => parseDirective(nested, 'agent/threads/spawn_worker.md')).toThrow(/holds a description only/);
  });
});
