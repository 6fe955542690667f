/**
 * Streaming inline tool execution end to end (issue 14): a forked directive whose model streams
 * at a fixed rate from the replay server, calling a real signed node/function tool that writes a
 * file. The file exists before the stream's final event is sent; five calls of the tool run once
 * each, in stream order; the transcript says so, in seed 002's order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTranscript, reconstructMessages } from '@ryeos/threads';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const MARK_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Append a mark to marks.log, after a pause';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: { tag: { type: 'string' }, ms: { type: 'integer' } },
  required: ['tag'],
};
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export async function execute(params, context) {
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, params.ms ?? 0));
  appendFileSync(join(context.project_path, 'marks.log'), JSON.stringify({ tag: params.tag, started, ended: Date.now() }) + '\\n');
  return { success: true, tag: params.tag };
}
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/mark.js', MARK_TOOL);
  await fx.sign('tool:acme/mark');
  await fx.write(
    '.ai/directives/acme/marker.md',
    directive('marker', {
      metadata: '<permissions><execute><tool>acme.mark</tool></execute></permissions>',
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

function marks(): Mark[] {
  return readFileSync(join(fixture().project, 'marks.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Mark);
}

const markCall = (tag: string, ms = 0) => ({ name: 'acme_mark', id: `toolu_${tag}`, input: { tag, ms } });
const done = { name: 'rye_directive_return', input: { answer: 'ok' } };

describe('streaming inline tool execution through a fork', () => {
  it("a tool's file exists before the stream's final event is sent", async () => {
    const server = await fixture().serve({
      turns: [
        { text: 'Marking now.', tool_calls: [markCall('a')], chunk_delay_ms: 10, hold_before_final_ms: 1500 },
        { tool_calls: [done] },
      ],
    });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/marker', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success', outputs: { answer: 'ok' } });
    const [mark] = marks();
    expect(server.requests[0]!.finalSentAt).toBeGreaterThan(0);
    expect(mark!.ended).toBeLessThan(server.requests[0]!.finalSentAt!);

    // The transcript's order is seed 002's, and it rebuilds the conversation the model saw.
    const dir = join(fixture().project, '.ai', 'state', 'threads', String(result.thread_id));
    const events = await readTranscript(join(dir, 'transcript.jsonl'));
    const turn1 = events
      .filter((e) => e.payload.turn === 1)
      .map((e) => e.event_type)
      .filter((t) => ['cognition_in', 'tool_call_start', 'tool_call_result', 'cognition_out'].includes(t));
    expect(turn1).toEqual(['cognition_in', 'tool_call_start', 'tool_call_result', 'cognition_out']);
    const deltas = events.filter((e) => e.event_type === 'cognition_out_delta' && e.payload.turn === 1);
    expect(deltas.map((e) => e.payload.text).join('')).toBe('Marking now.');
    const rebuilt = reconstructMessages(events);
    expect(JSON.stringify(server.requests[1]!.body)).toContain(
      JSON.stringify(rebuilt[2]!.content).slice(1, -1),
    );
  }, 30_000);

  it('five calls of one tool in one turn run once each, in stream order, never overlapping', async () => {
    const tags = ['a', 'b', 'c', 'd', 'e'];
    await fixture().serve({
      turns: [{ tool_calls: tags.map((t) => markCall(t, 30)), chunk_delay_ms: 5 }, { tool_calls: [done] }],
    });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/marker', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const seen = marks();
    expect(seen.map((m) => m.tag)).toEqual(tags);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.started).toBeGreaterThanOrEqual(seen[i - 1]!.ended);
    const timing = (result.metadata as { timing: { tool_start_delays_ms: number[] } }).timing;
    expect(timing.tool_start_delays_ms).toHaveLength(5);
  }, 30_000);
});
