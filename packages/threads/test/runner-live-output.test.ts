/**
 * A running tool's stderr as live `tool_output` events (issue 33): chunks cut anywhere become
 * whole lines, a line that never ends is still shown, stdout (the tool's result) is not, and
 * nothing is written once the call has ended.
 */
import { describe, expect, it } from 'vitest';
import { LIVE_OUTPUT_CALL_MAX_BYTES, LiveToolOutput } from '../src/runner/live-output.js';

function recorder() {
  const events: Array<{ type: string; payload: Record<string, unknown> }> = [];
  return {
    events,
    log: { emit: (type: string, payload: Record<string, unknown>) => events.push({ type, payload }) },
  };
}

describe('LiveToolOutput', () => {
  it('joins chunks into whole stderr lines, writes the rest at the end, and ignores stdout and late chunks', () => {
    const { events, log } = recorder();
    const live = new LiveToolOutput(log, 'call_1', 3);
    live.onOutput('build', 'stderr');
    live.onOutput('ing 1\nbuilding 2\nbui', 'stderr');
    live.onOutput('{"success":true}\n', 'stdout');
    live.onOutput('lding 3', 'stderr');
    live.end();
    live.onOutput('late\n', 'stderr');
    expect(events).toEqual([
      {
        type: 'tool_output',
        payload: { call_id: 'call_1', stream: 'stderr', text: 'building 1\nbuilding 2\n', turn: 3 },
      },
      {
        type: 'tool_output',
        payload: { call_id: 'call_1', stream: 'stderr', text: 'building 3\n', turn: 3 },
      },
    ]);
  });

  it('writes a line that never ends (a progress bar) once it is long, and survives a log that throws', () => {
    const { events, log } = recorder();
    const live = new LiveToolOutput(log, 'c', 1);
    live.onOutput('#'.repeat(5000), 'stderr');
    expect(events).toHaveLength(1);
    const failing = new LiveToolOutput(
      {
        emit: () => {
          throw new Error('closed');
        },
      },
      'c',
      1,
    );
    expect(() => failing.onOutput('x\n', 'stderr')).not.toThrow();
  });

  it("records at most LIVE_OUTPUT_CALL_MAX_BYTES of one call's output as written (escaped), then one notice", () => {
    const { events, log } = recorder();
    const live = new LiveToolOutput(log, 'c', 1);
    // rye/bash echoes 256 KiB of raw output; control characters grow six-fold once JSON-escaped.
    const chunk = `${'\u0001'.repeat(1023)}\n`;
    for (let i = 0; i < 256; i++) live.onOutput(chunk, 'stderr');
    live.end();
    const written = events.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e.payload.text)), 0);
    expect(written).toBeLessThanOrEqual(LIVE_OUTPUT_CALL_MAX_BYTES + 200);
    expect(String(events.at(-1)!.payload.text)).toMatch(/live output past 262144 bytes not shown/);
  });
});
