/**
 * `readResumePoint`: where a killed run stands, from its own transcript — the conversation with
 * its interrupted calls answered, every response's cost — and what it refuses to resume from: a
 * signed prefix that no longer verifies, an unsigned tail that is not this run's own log, a file
 * others could have written.
 */
import { appendFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import { INTERRUPTED_CALL_RESULT, readResumePoint } from '../src/runner/resume-point.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const PRICING = { input: 3, output: 15 };
const THREAD = 'acme/steps/steps-1';

/** Two completed turns (one call each) and a third whose call started and never ended. */
async function killedRun(): Promise<{ path: string; trust: ReturnType<typeof testKey>['trust'] }> {
  const { signer, trust } = testKey();
  const path = join(await dirs.make(), 'transcript.jsonl');
  const w = new TranscriptWriter(path, THREAD, signer);
  w.write('system_prompt', { text: 'You are careful.' });
  w.write('cognition_in', { text: 'Mark a, b and c.', role: 'user', turn: 1 });
  const usage = [
    [1000, 10],
    [2000, 20],
    [3000, 30],
  ];
  for (const [i, tag] of ['a', 'b', 'c'].entries()) {
    const turn = i + 1;
    if (turn > 1) w.checkpoint(turn - 1);
    w.write('tool_call_start', { tool: 'acme_mark', call_id: `toolu_${tag}`, input: { tag }, turn });
    w.write('response_usage', { turn, input_tokens: usage[i]![0], output_tokens: usage[i]![1] });
    if (tag === 'c') break;
    w.write('tool_call_result', { call_id: `toolu_${tag}`, output: `{"tag":"${tag}"}`, turn });
    w.write('cognition_out', { text: `Marking ${tag}.`, turn, tool_count: 1, is_partial: false });
  }
  w.flush();
  // SIGKILL: the writer never closes, so no final checkpoint covers turn 3.
  return { path, trust };
}

describe('readResumePoint', () => {
  it('rebuilds the conversation, answers the interrupted call and sums every response', async () => {
    const { path, trust } = await killedRun();
    const point = await readResumePoint(path, { threadId: THREAD, trust, pricing: PRICING });
    expect(point).toBeDefined();
    expect(point!.system).toBe('You are careful.');
    expect(point!.interrupted.map((call) => call.id)).toEqual(['toolu_c']);
    expect(point!.lastTurn).toBe(3);
    const tools = point!.messages.filter((m) => m.role === 'tool');
    expect(tools).toEqual([
      { role: 'tool', tool_call_id: 'toolu_a', content: '{"tag":"a"}' },
      { role: 'tool', tool_call_id: 'toolu_b', content: '{"tag":"b"}' },
      { role: 'tool', tool_call_id: 'toolu_c', content: INTERRUPTED_CALL_RESULT, is_error: true },
    ]);
    let spend = 0;
    for (const [input, output] of [
      [1000, 10],
      [2000, 20],
      [3000, 30],
    ])
      spend += (input! * PRICING.input + output! * PRICING.output) / 1e6;
    expect(point!.cost).toMatchObject({ turns: 3, input_tokens: 6000, output_tokens: 60, spend });
  });

  it('a run that never began has no resume point', async () => {
    const { signer, trust } = testKey();
    const path = join(await dirs.make(), 'transcript.jsonl');
    expect(await readResumePoint(path, { threadId: THREAD, trust })).toBeUndefined();
    const w = new TranscriptWriter(path, THREAD, signer);
    w.write('system_prompt', { text: 'x' });
    w.flush();
    expect(await readResumePoint(path, { threadId: THREAD, trust })).toBeUndefined();
  });

  it('drops a last line the kill cut short, from the file too', async () => {
    const { path, trust } = await killedRun();
    const whole = readFileSync(path);
    appendFileSync(path, '{"timestamp":1,"thread_id":"acme/steps/steps-1","event_type":"tool_call_res');
    const point = await readResumePoint(path, { threadId: THREAD, trust, pricing: PRICING });
    expect(point!.interrupted.map((call) => call.id)).toEqual(['toolu_c']);
    expect(readFileSync(path)).toEqual(whole);
  });

  it('refuses a signed prefix that was changed (a completed call turned into an interrupted one)', async () => {
    const { path, trust } = await killedRun();
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace(/\n[^\n]*"call_id":"toolu_a","output"[^\n]*/, ''));
    await expect(readResumePoint(path, { threadId: THREAD, trust })).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringMatching(/checkpoint at line \d+/),
    });
  });

  it('refuses a key it does not trust', async () => {
    const { path } = await killedRun();
    const stranger = testKey(9).trust;
    await expect(readResumePoint(path, { threadId: THREAD, trust: stranger })).rejects.toMatchObject({
      code: 'INTEGRITY',
    });
  });

  it('refuses an unsigned tail that is not this run’s own log', async () => {
    const cases: Array<[string, string]> = [
      // A result planted for another thread.
      [
        `{"timestamp":2,"thread_id":"acme/other-1","event_type":"tool_call_result","payload":{"call_id":"toolu_c","output":"ok","turn":3}}\n`,
        "belongs to thread 'acme/other-1'",
      ],
      // A line going back before the last checkpoint's turn.
      [
        `{"timestamp":2,"thread_id":"${THREAD}","event_type":"tool_call_result","payload":{"call_id":"toolu_c","output":"ok","turn":1}}\n`,
        'follows turn',
      ],
      // The thread already ended.
      [
        `{"timestamp":2,"thread_id":"${THREAD}","event_type":"thread_completed","payload":{}}\n`,
        'already ended',
      ],
    ];
    for (const [line, why] of cases) {
      const { path, trust } = await killedRun();
      appendFileSync(path, line);
      await expect(readResumePoint(path, { threadId: THREAD, trust }), why).rejects.toMatchObject({
        code: 'INTEGRITY',
        message: expect.stringContaining(why),
      });
    }
  });

  it('refuses a transcript group or others may write', async () => {
    const { path, trust } = await killedRun();
    chmodSync(path, 0o620);
    await expect(readResumePoint(path, { threadId: THREAD, trust })).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringMatching(/group or others may write it/),
    });
  });
});
