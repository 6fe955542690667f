/**
 * Attacks on managed threads that an earlier review found working, each now refused: a hostile
 * model signing a planted tool through a knowledge-only sign capability, a child thread escaping
 * its parent's budget on an unpriced model, and one response making thousands of calls.
 */
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
});

async function addDirective(name: string, metadata: string) {
  const fx = fixture();
  await fx.write(`.ai/directives/acme/${name}.md`, directive(name, { metadata, outputs: OUTPUTS }));
  await fx.sign(`directive:acme/${name}`);
}

describe('a hostile model', () => {
  it('cannot sign a planted tool through a knowledge-only sign capability (a folder named like a ref)', async () => {
    const fx = fixture();
    const evil = await fx.write('.ai/tools/evil.sh', '#!/bin/bash\n# rye:meta version=1.0.0\necho evil\n');
    symlinkSync(join(fx.project, '.ai', 'tools'), join(fx.project, 'ab:x'));
    await addDirective('signer', '<permissions><sign><knowledge>*</knowledge></sign></permissions>');
    const server = await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_sign', input: { item_type: 'knowledge', item_id: 'ab:x/evil.sh' } }] },
        {
          tool_calls: [
            { name: 'rye_sign', input: { item_type: 'knowledge', item_id: 'tool:evil' } },
            { name: 'rye_sign', input: { item_type: 'knowledge', item_id: 'acme/*' } },
            { name: 'rye_sign', input: { item_type: 'knowledge', item_id: 'acme/x', source: 'user' } },
          ],
        },
        { tool_calls: [returnCall('tried')] },
      ],
    });
    const result = await fx.rye.execute({ item_id: 'directive:acme/signer', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    expect(readFileSync(evil, 'utf8')).not.toContain('rye:signed');
    const answers = JSON.stringify(server.requests[2]!.body);
    expect(answers).toContain("item_type 'knowledge' contradicts the ref prefix 'tool:'");
    expect(answers).toContain('signs one item at a time');
    expect(answers).toContain('in the project space only');
  }, 30_000);

  it('gets at most max_tool_calls_per_turn calls run from one response; the rest are refused, not kept', async () => {
    const fx = fixture();
    await addDirective(
      'many',
      '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>',
    );
    const calls = Array.from({ length: 70 }, (_, i) => ({
      name: 'rye_file_system_read',
      id: `toolu_${i}`,
      input: { path: 'notes.txt' },
    }));
    const server = await fx.serve({ turns: [{ tool_calls: calls }, { tool_calls: [returnCall('done')] }] });
    const result = await fx.rye.execute({ item_id: 'directive:acme/many', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const second = JSON.stringify(server.requests[1]!.body);
    // One refusal answers the first call past the cap; the calls after it are not kept at all.
    expect(second.split('Too many tool calls in one response').length - 1).toBe(1);
    expect(second.split('alpha').length - 1).toBe(64);
    expect(second).toContain('toolu_64');
    expect(second).not.toContain('toolu_65');
  }, 60_000);

  it("cannot run a child on an unpriced model, which would spend past the parent's budget unseen", async () => {
    const fx = fixture();
    await addDirective(
      'child',
      '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>',
    );
    await addDirective(
      'parent',
      '<permissions><execute><directive>acme.child</directive></execute></permissions>',
    );
    const server = await fx.serve({
      turns: [
        {
          tool_calls: [
            {
              name: 'rye_execute',
              input: { item_id: 'directive:acme/child', thread: 'fork', model: 'claude-opus-4-1' },
            },
          ],
        },
        { tool_calls: [returnCall('parent done')] },
      ],
    });
    const result = await fx.rye.execute({ item_id: 'directive:acme/parent', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1]!.body)).toContain('a child thread must run on a priced model');

    // A root on an unpriced model runs, warned that its spend limit cannot fire.
    const root = await fx.serve({ turns: [{ tool_calls: [returnCall('root')] }] });
    const alone = await fx.rye.execute({
      item_id: 'directive:acme/child',
      thread: 'fork',
      model: 'claude-opus-4-1',
    });
    expect(alone).toMatchObject({ status: 'success', warnings: [expect.stringContaining('has no pricing')] });
    expect(root.requests).toHaveLength(1);
  }, 60_000);
});
