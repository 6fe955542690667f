/**
 * What a model or tool wrote reaches a person's terminal through `rye threads show|tail|wait|list`
 * and every JSON result: it is shown there, never obeyed (issue 28, point 8). U+009B is a C1 CSI
 * that `JSON.stringify` leaves raw; ESC, BEL and CR are C0; U+202E reorders what is displayed.
 */
import { describe, expect, it } from 'vitest';
import { printable, printableJson } from '../src/cli/printable.js';
import { rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const HOSTILE = 'ok\u009b2J\u001b]0;pwned\u0007\rgone\u202eevil\u007f';
/** A raw control a terminal would act on (newline kept: the outputs are multi-line). */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const fixture = useThreadFixture();

describe('model text on the terminal', () => {
  it('rye threads show, tail, wait and list print controls as escapes and stay valid JSON', async () => {
    const fx = fixture();
    await fx.write(
      '.ai/directives/acme/echo.md',
      directive('echo', {
        metadata: '<model tier="fast" provider="anthropic"/>',
        outputs: '<output name="answer" required="true">The answer</output>',
      }),
    );
    await fx.sign('directive:acme/echo');
    await fx.serve({
      turns: [
        {
          tool_calls: [{ name: 'rye_directive_return', input: { answer: HOSTILE } }],
        },
      ],
    });
    const result = await fx.rye.execute({ item_id: 'directive:acme/echo', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const id = String(result.thread_id);
    const cli = (...args: string[]) => ryeCli([...args, '--project', fx.project], { env: fx.env });

    const show = await cli('threads', 'show', id);
    expect(show.code, show.stdout + show.stderr).toBe(0);
    expect(show.stdout).not.toMatch(RAW_CONTROL);
    expect(show.stdout).toContain('ok\\u009b2J\\u001b]0;pwned\\u0007\\rgone\\u202eevil\\u007f');
    // Escaped, it is the same JSON: a program reading it gets the model's text back.
    expect(JSON.stringify(show.json)).toContain(JSON.stringify(HOSTILE).slice(1, -1));

    const wait = await cli('threads', 'wait', id);
    expect(wait.stdout).not.toMatch(RAW_CONTROL);
    expect(wait.json).toMatchObject({ status: 'success' });

    const list = await cli('threads', 'list');
    expect(list.stdout).not.toMatch(RAW_CONTROL);

    const tail = await cli('threads', 'tail', id);
    expect(tail.code, tail.stderr).toBe(0);
    expect(tail.stdout).toContain(
      '→ rye_directive_return {"answer":"ok\\u009b2J\\u001b]0;pwned\\u0007\\rgone\\u202eevil\\u007f"}',
    );
    expect(tail.stdout).not.toMatch(RAW_CONTROL);

    const raw = await cli('threads', 'tail', id, '--json');
    expect(raw.stdout).not.toMatch(RAW_CONTROL);
    const events = raw.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(JSON.stringify(events)).toContain(HOSTILE.slice(0, 4));
    expect(raw.stdout).toContain('ok\\u009b2J');
  }, 60_000);

  it('a tool result printed by rye execute keeps no raw C1 control', async () => {
    const fx = fixture();
    await fx.write('notes.txt', `${HOSTILE}\n`);
    const run = await ryeCli(
      ['execute', 'tool:rye/file-system/read', '--params', '{"path":"notes.txt"}', '--project', fx.project],
      { env: fx.env },
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(String((run.json.data as { output?: unknown }).output)).toContain('ok\u009b2J');
  }, 60_000);
});

describe('printable', () => {
  it('keeps newlines and tabs in text, escapes the rest, leaves other text alone', () => {
    expect(printable('a\tb\nc\u009bd\u001be')).toBe('a\tb\nc\\u009bd\\u001be');
    expect(printable('café — 日本 👍')).toBe('café — 日本 👍');
  });

  it('escapes what JSON.stringify leaves raw, so the JSON parses to the same value', () => {
    const json = JSON.stringify({ text: HOSTILE });
    const shown = printableJson(json);
    expect(shown).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(shown)).toEqual({ text: HOSTILE });
  });
});
