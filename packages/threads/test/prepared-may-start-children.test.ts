/**
 * A detached thread's runner keeps a runner ready for its first child only when the thread may
 * start one: its capabilities reach directives and its limits leave it a spawn and a level.
 */
import { describe, expect, it } from 'vitest';
import { mayStartChildren, type PreparedThread } from '../src/index.js';

function prepared(capabilities: string[], limits: { spawns?: number; depth?: number } = {}): PreparedThread {
  return {
    capabilities,
    limits: {
      turns: 5,
      tokens: 1000,
      spend: 1,
      spawns: 3,
      depth: 2,
      duration_seconds: 60,
      spend_currency: 'USD',
      ...limits,
    },
  } as unknown as PreparedThread;
}

describe('mayStartChildren', () => {
  it('is true for a thread that may execute a directive, with a spawn and a level left', () => {
    expect(mayStartChildren(prepared(['rye.execute.directive.acme.kid']))).toBe(true);
    expect(mayStartChildren(prepared(['rye.execute.*']))).toBe(true);
    expect(mayStartChildren(prepared(['rye.*']))).toBe(true);
  });

  it('is false for a thread whose capabilities reach tools only, or nothing', () => {
    expect(mayStartChildren(prepared(['rye.execute.tool.rye.file-system.read']))).toBe(false);
    expect(mayStartChildren(prepared(['rye.search.*', 'rye.load.directive.acme.kid']))).toBe(false);
    expect(mayStartChildren(prepared([]))).toBe(false);
  });

  it('is false when its limits leave no spawn or no level', () => {
    expect(mayStartChildren(prepared(['rye.execute.directive.*'], { spawns: 0 }))).toBe(false);
    expect(mayStartChildren(prepared(['rye.execute.directive.*'], { depth: 0 }))).toBe(false);
  });
});
