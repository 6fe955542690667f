import { describe, expect, it } from 'vitest';
import { describeFix, isFix, RyeError, toErrorEnvelope } from '../src/index.js';

describe('an error carries its fix as data', () => {
  it('the envelope holds the fix beside a hint in words that fit every caller', () => {
    const error = new RyeError('INTEGRITY', 'Unsigned item: x', {
      hint: 'Sign tool:acme/x in project space.',
      fix: { action: 'sign', refs: ['tool:acme/x'], space: 'project' },
    });
    expect(toErrorEnvelope(error)).toEqual({
      status: 'error',
      error: 'Unsigned item: x',
      error_type: 'integrity',
      hint: 'Sign tool:acme/x in project space.',
      fix: { action: 'sign', refs: ['tool:acme/x'], space: 'project' },
    });
    expect(toErrorEnvelope(new RyeError('VALIDATION', 'bad'))).not.toHaveProperty('fix');
  });

  it('a fix read back from JSON counts only when well-formed', () => {
    expect(isFix({ action: 'generate_key', force: false })).toBe(true);
    expect(isFix({ action: 'list_threads' })).toBe(true);
    expect(isFix({ action: 'sign', refs: [], space: 'project' })).toBe(false);
    expect(isFix({ action: 'sign', refs: ['tool:x'], space: 'system' })).toBe(false);
    expect(isFix({ action: 'copy_to_space', ref: 'tool:x', to: 'project' })).toBe(true);
    expect(isFix({ action: 'toString' })).toBe(false);
    expect(isFix({ action: 'run_shell', command: 'rm -rf ~' })).toBe(false);
  });

  it('described without naming any command', () => {
    expect(describeFix({ action: 'copy_to_space', ref: 'tool:x', to: 'project' })).toBe(
      'copy tool:x to project space and sign the copy there',
    );
    expect(describeFix({ action: 'generate_key', force: true })).not.toMatch(/rye /);
  });
});
