/**
 * What `directive_return` hands back is held to the directive's `<outputs>` (issue 28, point 13):
 * a required output may be `false` or `0`, declared types are checked and the model is told what
 * to fix, undeclared fields are dropped, and a thread whose limit stops it names what it still owed.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const READ_CAP = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const ret = (input: Record<string, unknown>) => ({ tool_calls: [{ name: 'rye_directive_return', input }] });

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
});

async function run(outputs: string, turns: unknown[], extra: Record<string, unknown> = {}) {
  const fx = fixture();
  await fx.write('.ai/directives/acme/typed.md', directive('typed', { metadata: READ_CAP, outputs }));
  await fx.sign('directive:acme/typed');
  const server = await fx.serve({ turns: turns as never });
  const result = await fx.rye.execute({ item_id: 'directive:acme/typed', thread: 'fork', ...extra });
  return { result, server };
}

/** The tool result the model read back in request `index`. */
function toolResultOf(server: { requests: Array<{ body: unknown }> }, index: number): string {
  const body = server.requests[index]!.body as { messages: Array<{ content: unknown }> };
  return JSON.stringify(body.messages.at(-1)!.content);
}

describe('returned outputs are held to their declaration', () => {
  it('a required boolean output may be false, and a required number 0', async () => {
    const { result, server } = await run(
      '<ok type="boolean" required="true">Passed?</ok><n type="integer" required="true">Count</n>',
      [ret({ ok: false, n: 0 })],
    );
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success', outputs: { ok: false, n: 0 } });
    expect(server.requests).toHaveLength(1);
  }, 30_000);

  it('a value of the wrong type is refused with what to fix, and the corrected return is kept', async () => {
    const { result, server } = await run(
      '<n type="integer" required="true">Count</n><title required="true">Title</title>',
      [
        ret({ n: 'DROP TABLE', title: 'ok' }),
        ret({ n: 3, title: 12345 }),
        ret({ n: 3, title: { evil: 1 } }),
        ret({ n: 3, title: '   ' }),
        ret({ n: 3, title: 'Report' }),
      ],
    );
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'success',
      outputs: { n: 3, title: 'Report' },
    });
    expect(server.requests).toHaveLength(5);
    expect(toolResultOf(server, 1)).toContain('n must be an integer');
    expect(toolResultOf(server, 2)).toContain('title must be a string, got 12345');
    expect(toolResultOf(server, 3)).toContain('title must be a string');
    expect(toolResultOf(server, 4)).toContain('Missing required output fields: title');
  }, 30_000);

  it('fields the directive does not declare are dropped from the result and thread.json, and the model is told', async () => {
    const { result, server } = await run('<summary required="true">A summary</summary>', [
      ret({ summary: 'ok', status: 'hacked', thread_id: 'T-fake', cost: 0 }),
      { text: 'done' },
    ]);
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success', thread_status: 'completed' });
    expect(result.outputs).toEqual({ summary: 'ok' });
    const record = JSON.parse(
      await readFile(
        join(fixture().project, '.ai', 'state', 'threads', String(result.thread_id), 'thread.json'),
        'utf8',
      ),
    );
    expect(record.outputs).toEqual({ summary: 'ok' });
    expect(record.thread_id).toBe(result.thread_id);
    const transcript = await readFile(
      join(fixture().project, '.ai', 'state', 'threads', String(result.thread_id), 'transcript.jsonl'),
      'utf8',
    );
    expect(transcript).toContain('Not declared as outputs, so not kept: status, thread_id, cost');
    expect(server.requests).toHaveLength(1);
  }, 30_000);

  it('a thread whose turns run out before it returns names the outputs it still owes', async () => {
    const read = { tool_calls: [{ name: 'rye_file_system_read', input: { path: 'notes.txt' } }] };
    const { result } = await run('<summary required="true">A summary</summary>', [read, read, read], {
      limit_overrides: { turns: 2 },
    });
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'error',
      limit_code: 'turns_exceeded',
      missing_outputs: ['summary'],
    });
  }, 30_000);
});
