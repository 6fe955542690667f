/**
 * `rye threads tail` of an async tool run prints the tool's result (issue 28, point 21): such a
 * run writes no transcript, and tail used to print nothing at all.
 */
import { describe, expect, it } from 'vitest';
import { describeToolRun } from '../src/commands/threads-tail.js';
import { rye as ryeCli } from './helpers.js';
import { useThreadFixture } from './threads-helpers.js';

const fixture = useThreadFixture();

async function startTool(command: string): Promise<string> {
  const fx = fixture();
  const started = await ryeCli(
    ['execute', 'tool:rye/bash', '--params', JSON.stringify({ command }), '--async', '--project', fx.project],
    { env: fx.env },
  );
  expect(started.json, started.stdout + started.stderr).toMatchObject({ status: 'success', async: true });
  return String(started.json.thread_id);
}

const tail = (id: string, ...flags: string[]) =>
  ryeCli(['threads', 'tail', id, ...flags, '--project', fixture().project], { env: fixture().env });

describe('rye threads tail of an async tool run', () => {
  it('says it is running, then --follow prints its result when it ends', async () => {
    const id = await startTool('sleep 3; echo hi-from-the-tool');
    const early = await tail(id);
    expect(early.code, early.stderr).toBe(0);
    expect(early.stdout).toMatch(
      /^== (created|running): tool:rye\/bash \(its result is printed here when it ends/,
    );

    const followed = await tail(id, '--follow');
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(
      /^== completed: tool:rye\/bash \(its result as the project's registry stores it\)\n\{/,
    );
    expect(followed.stdout).toContain('"stdout": "hi-from-the-tool\\n"');

    const again = await tail(id);
    expect(again.stdout).toBe(followed.stdout);
  }, 60_000);

  it('--json prints the result envelope as one JSON line', async () => {
    const id = await startTool('echo json-result');
    await tail(id, '--follow');
    const raw = await tail(id, '--json');
    const lines = raw.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      status: 'success',
      type: 'tool',
      item_id: 'tool:rye/bash',
      data: { stdout: 'json-result\n' },
    });
  }, 60_000);

  it("a failed tool run's tail shows the error it ended with, escaped", async () => {
    // \302\233 is U+009B in UTF-8: a one-character CSI.
    const id = await startTool("printf 'bad\\302\\233[2J'; exit 3");
    const followed = await tail(id, '--follow');
    expect(followed.stdout).toMatch(
      /^== error: tool:rye\/bash \(its result as the project's registry stores it\)\n/,
    );
    expect(followed.stdout).toContain('"error": "Command exited with code 3"');
    expect(followed.stdout).toContain('"exit_code": 3');
    expect(followed.stdout).toContain('bad\\u009b[2J');
    expect(followed.stdout).not.toMatch(/[\u007f-\u009f]/);
  }, 60_000);

  it('rye threads show of an async tool run reports its registry row, not a broken record', async () => {
    const id = await startTool('echo shown');
    await tail(id, '--follow');
    const shown = await ryeCli(['threads', 'show', id, '--project', fixture().project], {
      env: fixture().env,
    });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json).toMatchObject({
      thread_id: id,
      kind: 'tool_run',
      status: 'success',
      thread_status: 'completed',
      registry: { unverified: true, status: 'completed' },
      integrity: { valid: true },
    });
    expect(shown.stdout).not.toContain('No thread.json');
  }, 60_000);
});

describe('a tool run result from the registry', () => {
  it('is printed as data: a fix a repository planted in registry.db is not rendered as a rye command', () => {
    const row = {
      thread_id: '0f0f0f0f-1111-4222-8333-444444444444',
      directive: 'tool/acme/setup',
      status: 'error',
      result: {
        envelope: {
          status: 'error',
          item_id: 'tool:acme/setup',
          error: 'Unsigned item',
          error_type: 'integrity',
          hint: 'Re-sign it.',
          fix: { action: 'sign', refs: ['tool:acme/setup'], space: 'user' },
        },
      },
    };
    for (const json of [false, true]) {
      const text = describeToolRun(row, json) ?? '';
      expect(text).toContain('Re-sign it.');
      expect(text).not.toMatch(/Run: rye|rye sign/);
    }
  });
});
