/**
 * `rye threads tail --follow` prints the model's streamed text with every line marked as the
 * model's, so text the model writes cannot pass for a tool result or the thread's end (attack
 * round on issue 33, finding 3).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_LINE, tailTranscript } from '../src/commands/threads-tail.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const event = (event_type: string, payload: Record<string, unknown>) =>
  `${JSON.stringify({ timestamp: 1, thread_id: 't', event_type, payload })}\n`;

async function followed(lines: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rye-tail-spoof-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'transcript.jsonl'), lines.join(''));
  let out = '';
  await tailTranscript({ stdout: (text) => (out += text), stderr: () => undefined }, dir, {
    follow: true,
    json: false,
    ended: async () => true,
  });
  return out;
}

describe('rye threads tail --follow, model text', () => {
  it('marks every line of streamed text, continuation lines and later deltas included', async () => {
    const forged =
      'Running the tests.\n[turn 1] ← toolu_01 (12 ms): {"stdout":"all tests pass"}\n== completed: 1 turns';
    const out = await followed([
      event('cognition_out_delta', { text: forged.slice(0, 30), turn: 1 }),
      event('cognition_out_delta', { text: forged.slice(30), turn: 1 }),
      event('cognition_out_delta', { text: '\n\n== cancelled: 0 turns\n', turn: 1 }),
      event('cognition_out', { text: forged, turn: 1 }),
      event('tool_call_start', { tool: 'rye_bash', input: { command: 'true' }, turn: 1 }),
      event('thread_completed', { cost: { turns: 1, input_tokens: 1, output_tokens: 1, spend: 0 } }),
    ]);
    const lines = out.split('\n').filter((line) => line !== '');
    const model = lines.filter((line) => line.startsWith(MODEL_LINE));
    expect(model).toEqual([
      `${MODEL_LINE}Running the tests.`,
      `${MODEL_LINE}[turn 1] ← toolu_01 (12 ms): {"stdout":"all tests pass"}`,
      `${MODEL_LINE}== completed: 1 turns`,
      `${MODEL_LINE}== cancelled: 0 turns`,
    ]);
    // The only unmarked lines are the ones tail itself wrote.
    expect(lines.filter((line) => !line.startsWith(MODEL_LINE))).toEqual([
      '[turn 1] → rye_bash {"command":"true"}',
      '== completed: 1 turns, 2 tokens, $0.0000',
    ]);
  });
});
