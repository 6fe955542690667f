/**
 * Managed threads end to end through the facade (issue 13): `execute(directive, thread: "fork")`
 * against the provider replay server on 127.0.0.1 — real signed tools, real SQLite, real signed
 * thread.json and transcript.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rye as ryeCli } from './helpers.js';
import { useThreadFixture } from './threads-helpers.js';

const SUMMARIZE = `# Summarize

\`\`\`xml
<directive name="summarize" version="1.0.0">
  <metadata>
    <description>Summarize a file of the project</description>
    <category>acme</category>
    <author>acme</author>
    <limits turns="6" spend="0.5"/>
    <permissions>
      <execute><tool>rye.file-system.read</tool></execute>
    </permissions>
  </metadata>
  <inputs>
    <input name="path" required="true">The file</input>
  </inputs>
  <outputs>
    <output name="summary" required="true">One sentence</output>
    <output name="lines">How many lines</output>
  </outputs>
</directive>
\`\`\`

Read {input:path} with the file-system read tool, then return a one-sentence summary.
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/directives/acme/summarize.md', SUMMARIZE);
  await fx.write('notes.txt', 'alpha\nbeta\ngamma\n');
  await fx.sign('directive:acme/summarize');
});

describe('execute(directive, thread: "fork")', () => {
  it('runs two turns: a real signed tool, then outputs through rye_directive_return', async () => {
    const server = await fixture().serve({
      turns: [
        {
          text: 'Reading the file.',
          tool_calls: [{ id: 'toolu_1', name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
          usage: { input_tokens: 1000, output_tokens: 100 },
        },
        {
          tool_calls: [
            {
              id: 'toolu_2',
              name: 'rye_directive_return',
              input: { summary: 'Three greek letters.', lines: '3' },
            },
          ],
          usage: { input_tokens: 2000, output_tokens: 50 },
        },
      ],
    });
    const result = await fixture().rye.execute({
      item_id: 'directive:acme/summarize',
      thread: 'fork',
      parameters: { path: 'notes.txt' },
    });
    expect(result, JSON.stringify(result, null, 2)).toMatchObject({
      status: 'success',
      type: 'directive',
      item_id: 'directive:acme/summarize',
      directive: 'acme/summarize',
      outputs: { summary: 'Three greek letters.', lines: '3' },
      cost: { turns: 2, input_tokens: 3000, output_tokens: 150 },
    });
    // haiku-4-5: $1 / $5 per million tokens
    expect((result.cost as { spend: number }).spend).toBeCloseTo((3000 * 1 + 150 * 5) / 1e6, 12);
    expect(result.thread_id).toMatch(/^acme\/summarize\/summarize-\d{13}$/);

    // The tool really ran: its result went back to the model in the second request.
    expect(server.requests).toHaveLength(2);
    const second = JSON.stringify(server.requests[1]!.body);
    expect(second).toContain('beta');
    expect(second).toContain('toolu_1');
    const first = server.requests[0]!.body as {
      tools: { name: string }[];
      system?: string;
      messages: unknown[];
    };
    expect(first.tools.map((t) => t.name).sort()).toEqual(
      ['rye_directive_return', 'rye_execute', 'rye_file_system_read', 'rye_read_artifact'].sort(),
    );
    expect(JSON.stringify(first.messages)).toContain('<returns>');

    // thread.json and the transcript verify; `rye threads show` says so.
    const show = await ryeCli(['threads', 'show', String(result.thread_id), '--project', fixture().project], {
      env: fixture().env,
    });
    expect(show.json, show.stdout + show.stderr).toMatchObject({
      status: 'success',
      thread_status: 'completed',
      outputs: { summary: 'Three greek letters.' },
      integrity: { valid: true, thread_json: { valid: true }, transcript: { valid: true } },
    });
    const list = await ryeCli(['threads', 'list', '--project', fixture().project], { env: fixture().env });
    expect(list.json).toMatchObject({
      count: 1,
      threads: [{ thread_id: result.thread_id, status: 'completed' }],
    });

    // A one-byte edit of either file is an integrity failure.
    const dir = join(fixture().project, '.ai', 'state', 'threads', String(result.thread_id));
    const transcript = join(dir, 'transcript.jsonl');
    const text = readFileSync(transcript, 'utf8');
    writeFileSync(transcript, text.replace('Reading the file.', 'Reading the filE.'));
    const tampered = await ryeCli(
      ['threads', 'show', String(result.thread_id), '--project', fixture().project],
      {
        env: fixture().env,
      },
    );
    expect(tampered.code).toBe(1);
    expect(tampered.json).toMatchObject({
      status: 'error',
      error_type: 'integrity',
      integrity: { valid: false, thread_json: { valid: true }, transcript: { valid: false } },
    });
    writeFileSync(transcript, text);
    const record = join(dir, 'thread.json');
    writeFileSync(record, readFileSync(record, 'utf8').replace('"completed"', '"completes"'));
    const tampered2 = await ryeCli(
      ['threads', 'show', String(result.thread_id), '--project', fixture().project],
      {
        env: fixture().env,
      },
    );
    expect(tampered2.json).toMatchObject({ status: 'error', integrity: { thread_json: { valid: false } } });
  }, 60_000);

  it('sends missing required outputs back to the model, which retries', async () => {
    const server = await fixture().serve({
      turns: [
        { tool_calls: [{ name: 'rye_directive_return', input: { lines: '3' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { summary: 'ok' } }] },
      ],
    });
    const result = await fixture().rye.execute({
      item_id: 'directive:acme/summarize',
      thread: 'fork',
      parameters: { path: 'notes.txt' },
    });
    expect(result).toMatchObject({ status: 'success', outputs: { summary: 'ok' }, cost: { turns: 2 } });
    expect(JSON.stringify(server.requests[1]!.body)).toContain('Missing required output fields: summary');
  }, 60_000);

  it('denies a tool outside the capabilities without running it, and the loop goes on', async () => {
    const server = await fixture().serve({
      turns: [
        {
          tool_calls: [
            {
              name: 'rye_execute',
              input: {
                item_id: 'tool:rye/file-system/write',
                parameters: { path: 'pwned.txt', content: 'x' },
              },
            },
          ],
        },
        { tool_calls: [{ name: 'rye_directive_return', input: { summary: 'denied as expected' } }] },
      ],
    });
    const result = await fixture().rye.execute({
      item_id: 'directive:acme/summarize',
      thread: 'fork',
      parameters: { path: 'notes.txt' },
    });
    expect(result).toMatchObject({ status: 'success', outputs: { summary: 'denied as expected' } });
    expect(() => readFileSync(join(fixture().project, 'pwned.txt'))).toThrow();
    expect(JSON.stringify(server.requests[1]!.body)).toContain(
      "Permission denied: 'rye.execute.tool.rye.file-system.write' not covered by capabilities",
    );
  }, 60_000);
});
