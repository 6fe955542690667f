/**
 * Live events (issue 33, point 2): a running tool's output and the model's text reach the
 * transcript while they happen, so `rye threads tail --follow` shows work in progress; the
 * thread's records still verify.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const fixture = useThreadFixture();

/**
 * The command blocks until the test creates `gate`: it cannot finish before tail printed its line.
 * Its output is computed (`$((…))`), so the printed call (its input) never contains it.
 */
const GATED =
  'echo live-line-$((6*7)); echo live-err-$((5*5)) >&2; while [ ! -f gate ]; do sleep 0.05; done; echo after-gate-$((2+2))';

async function startGatedThread(): Promise<string> {
  const fx = fixture();
  await fx.write(
    '.ai/directives/acme/gated.md',
    directive('gated', {
      metadata:
        '<model tier="general" provider="anthropic"/><limits turns="4" spend="0.5"/><permissions><execute><tool>rye.bash</tool></execute></permissions>',
      outputs: '<output name="answer" required="true">The answer</output>',
    }),
  );
  await fx.sign('directive:acme/gated');
  await fx.serve({
    turns: [
      {
        text: 'Let me run the gated command.',
        tool_calls: [{ name: 'rye_bash', input: { command: GATED } }],
      },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
    ],
  });
  const reply = await fx.rye.execute({ item_id: 'directive:acme/gated', thread: 'fork', async: true });
  expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', async: true });
  return String(reply.thread_id);
}

/** Runs `rye threads tail <id> --follow` and calls `onLine` with its output so far at every chunk. */
function followTail(
  id: string,
  onOutput: (stdout: string) => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const fx = fixture();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'threads', 'tail', id, '--follow', '--project', fx.project], {
      env: { PATH: process.env.PATH ?? '', ...fx.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      onOutput(stdout);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('rye threads tail --follow of a running bash tool', () => {
  it("prints the tool's output line while the tool is still running", async () => {
    const id = await startGatedThread();
    const gate = join(fixture().project, 'gate');
    let gatedAt: string | undefined;
    const tailed = await followTail(id, (stdout) => {
      // The gate opens only once tail has printed the line: had it waited for the tool's result,
      // the tool would never end and neither would tail (the run's timeout fails the test).
      if (gatedAt === undefined && stdout.includes('live-line-42')) {
        gatedAt = stdout;
        writeFileSync(gate, '');
      }
    });
    expect(tailed.code, tailed.stderr).toBe(0);
    expect(gatedAt, tailed.stdout).toBeDefined();
    expect(gatedAt).toContain('  │ live-line-42\n');
    expect(gatedAt).not.toContain('after-gate-4');
    // Assistant text where the model wrote it: before the call it made.
    const out = tailed.stdout;
    expect(out.indexOf('Let me run the gated command.')).toBeLessThan(out.indexOf('→ rye_bash'));
    expect(out.indexOf('→ rye_bash')).toBeLessThan(out.indexOf('live-line-42'));
    expect(out).toContain('  │ live-err-25\n');
    expect(out.indexOf('  │ after-gate-4')).toBeLessThan(out.indexOf('← '));
    expect(out).toMatch(/== completed: /);
  }, 90_000);

  it('keeps the live lines in the transcript: tail without --follow shows them in order, and the records verify', async () => {
    const id = await startGatedThread();
    writeFileSync(join(fixture().project, 'gate'), '');
    await followTail(id, () => undefined);
    const fx = fixture();
    const tailed = await ryeCli(['threads', 'tail', id, '--project', fx.project], { env: fx.env });
    expect(tailed.code, tailed.stderr).toBe(0);
    const out = tailed.stdout;
    expect(out).toMatch(/\[turn 1\] assistant: Let me run the gated command\.\n\[turn 1\] → rye_bash/);
    expect(out).toContain('  │ live-line-42\n');
    expect(out.indexOf('  │ after-gate-4')).toBeLessThan(out.indexOf('← '));
    expect(out.match(/Let me run the gated command/g)).toHaveLength(1);
    const shown = await ryeCli(['threads', 'show', id, '--json', '--project', fx.project], { env: fx.env });
    expect(shown.json, shown.stdout + shown.stderr).toMatchObject({
      status: 'success',
      integrity: { valid: true },
    });
  }, 90_000);
});
