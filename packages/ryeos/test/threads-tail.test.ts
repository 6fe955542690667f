/**
 * `rye threads tail` prints model and tool text for a person: what a model wrote can never drive
 * the terminal it is shown in (attack round on issue 15).
 */
import { describe, expect, it } from 'vitest';
import { printable } from '../src/cli/printable.js';
import { describeEvent } from '../src/commands/threads-tail.js';

describe('rye threads tail', () => {
  it('shows terminal control sequences and bidi overrides as escapes, keeping newlines and tabs', () => {
    const hostile = 'ok\u001b]0;pwned\u0007\u001b[2J\rgone\u009b31m\u202eevil\tend\n';
    const shown = printable(hostile);
    expect(shown).toBe('ok\\u001b]0;pwned\\u0007\\u001b[2J\\u000dgone\\u009b31m\\u202eevil\tend\n');
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  it('leaves ordinary text alone, accents and emoji included', () => {
    expect(printable('café — 日本 👍\n')).toBe('café — 日本 👍\n');
  });

  it("describes a streamed delta marked as the model's, so the printer is what makes it safe", () => {
    const line = describeEvent({ event_type: 'cognition_out_delta', payload: { text: 'a\u001b[1Ab' } }, true);
    expect(line).toBe('» a\u001b[1Ab');
    expect(printable(line ?? '')).toBe('» a\\u001b[1Ab');
  });
});
