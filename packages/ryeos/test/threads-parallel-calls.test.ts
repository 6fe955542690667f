/**
 * Parallel-safe tools end to end: a signed node/function tool that declares
 * `__parallel_safe__ = true` has the five calls of one response run side by side, while the same
 * tool without the mark keeps them one after another in stream order; either way the model reads
 * the results in the order it made the calls.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPalette, standardPrimaries } from '@ryeos/threads';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const markTool = (name: string, parallel: boolean) => `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Append a mark to ${name}.log, after a pause';
${parallel ? 'export const __parallel_safe__ = true;\n' : ''}export const CONFIG_SCHEMA = {
  type: 'object',
  properties: { tag: { type: 'string' }, ms: { type: 'integer' } },
  required: ['tag'],
};

import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

export async function execute(params, context) {
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, params.ms ?? 0));
  appendFileSync(join(context.project_path, '${name}.log'), JSON.stringify({ tag: params.tag, started, ended: Date.now() }) + '\\n');
  return { success: true, tag: params.tag };
}
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/peek.js', markTool('peek', true));
  await fx.write('.ai/tools/acme/poke.js', markTool('poke', false));
  await fx.sign('tool:acme/peek');
  await fx.sign('tool:acme/poke');
  await fx.write(
    '.ai/directives/acme/marker.md',
    directive('marker', {
      metadata: '<permissions><execute><tool>acme.peek</tool><tool>acme.poke</tool></execute></permissions>',
      outputs: '<output name="answer" required="true">Anything</output>',
    }),
  );
  await fx.sign('directive:acme/marker');
});

interface Mark {
  tag: string;
  started: number;
  ended: number;
}

function marks(name: string): Mark[] {
  return readFileSync(join(fixture().project, `${name}.log`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Mark);
}

const TAGS = ['a', 'b', 'c', 'd', 'e'];
const done = { name: 'rye_directive_return', input: { answer: 'ok' } };

/** Runs a fork whose first response makes five calls of `tool`; returns the tool results the model read. */
async function fiveCalls(tool: 'peek' | 'poke'): Promise<Array<{ id: string; tag: string }>> {
  const server = await fixture().serve({
    turns: [
      {
        tool_calls: TAGS.map((tag) => ({
          name: `acme_${tool}`,
          id: `toolu_${tag}`,
          input: { tag, ms: 300 },
        })),
        chunk_delay_ms: 5,
      },
      { tool_calls: [done] },
    ],
  });
  const result = await fixture().rye.execute({ item_id: 'directive:acme/marker', thread: 'fork' });
  expect(result, JSON.stringify(result)).toMatchObject({ status: 'success', outputs: { answer: 'ok' } });
  const messages = (server.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> })
    .messages;
  const blocks = messages.at(-1)!.content as Array<{ type: string; tool_use_id: string; content: unknown }>;
  return blocks
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({
      id: b.tool_use_id,
      tag: String(JSON.stringify(b.content).match(/"tag\\?":\\?"(\w)/)?.[1]),
    }));
}

/** Whether any two of the intervals overlap. */
function anyOverlap(seen: Mark[]): boolean {
  return seen.some((m, i) => seen.some((n, j) => i !== j && m.started < n.ended && n.started < m.ended));
}

describe('parallel-safe tools', () => {
  it('five calls of a parallel-safe tool run side by side; results reach the model in call order', async () => {
    const results = await fiveCalls('peek');
    const seen = marks('peek');
    expect(seen.map((m) => m.tag).sort()).toEqual(TAGS);
    expect(anyOverlap(seen)).toBe(true);
    expect(results).toEqual(TAGS.map((tag) => ({ id: `toolu_${tag}`, tag })));
  }, 30_000);

  it('five calls of a tool without the mark run one after another, in stream order', async () => {
    const results = await fiveCalls('poke');
    const seen = marks('poke');
    expect(seen.map((m) => m.tag)).toEqual(TAGS);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.started).toBeGreaterThanOrEqual(seen[i - 1]!.ended);
    expect(results).toEqual(TAGS.map((tag) => ({ id: `toolu_${tag}`, tag })));
  }, 30_000);

  it('calls of an unmarked tool through rye_execute, however its id is spelled, share its lane', async () => {
    const spellings = ['tool:acme/poke', 'tool:acme/poke ', ' tool:acme/poke', 'acme/poke'];
    await fixture().serve({
      turns: [
        {
          tool_calls: [
            ...spellings.map((item_id, i) => ({
              name: 'rye_execute',
              id: `toolu_x${i}`,
              input: {
                item_id,
                ...(i === 3 ? { item_type: 'tool' } : {}),
                parameters: { tag: `x${i}`, ms: 200 },
              },
            })),
            { name: 'acme_poke', id: 'toolu_p', input: { tag: 'p', ms: 200 } },
          ],
          chunk_delay_ms: 5,
        },
        { tool_calls: [done] },
      ],
    });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/marker', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    const seen = marks('poke');
    expect(seen).toHaveLength(5);
    expect(anyOverlap(seen)).toBe(false);
  }, 30_000);

  it("the bundle's read-only file-system tools are parallel-safe; the writing ones are not", async () => {
    const executor = await fixture().rye.executor();
    const palette = await buildPalette(executor, {
      capabilities: ['rye.execute.tool.rye.file-system.*'],
      primaries: standardPrimaries(),
    });
    const marked = Object.fromEntries(
      palette.entries.filter((e) => e.kind === 'tool').map((e) => [e.itemId, e.parallelSafe === true]),
    );
    expect(marked).toEqual({
      'rye/file-system/edit': false,
      'rye/file-system/glob': true,
      'rye/file-system/grep': true,
      'rye/file-system/ls': true,
      'rye/file-system/read': true,
      'rye/file-system/write': false,
    });
  });
});
