import { describe, expect, it } from 'vitest';
import {
  capOutputTokens,
  fixedRequestBytes,
  InputTokenBound,
  MIN_OUTPUT_TOKENS,
} from '../src/runner/spend-cap.js';

// claude-haiku-4-5: $1 / $5 per million tokens.
const HAIKU = { input: 1, output: 5 };
const cap = (
  remainingSpend: number,
  inputTokens: number,
  pricing: { input?: number; output?: number } | undefined = HAIKU,
  maxTokens = 16384,
) => capOutputTokens({ remainingSpend, pricing, inputTokens, maxTokens });

describe('capOutputTokens', () => {
  it('caps max_tokens by what the remaining budget pays for after the input', () => {
    // $0.05 − 2,000 input tokens ($0.002) = $0.048 → 9,600 output tokens.
    expect(cap(0.05, 2000)).toEqual({ maxTokens: 9600 });
    expect(cap(10, 2000)).toEqual({ maxTokens: 16384 });
  });

  it('refuses a request that cannot pay for the least useful answer', () => {
    const refused = cap(0.001, 100);
    expect(refused).toMatchObject({ refused: true });
    expect((refused as { leastCost: number }).leastCost).toBeCloseTo((100 + MIN_OUTPUT_TOKENS * 5) / 1e6, 12);
    expect(cap(0, 0)).toMatchObject({ refused: true });
  });

  it('an unpriced model is refused only when its input price alone is over', () => {
    expect(capOutputTokens({ remainingSpend: 0.001, inputTokens: 1e6, maxTokens: 100 })).toEqual({
      maxTokens: 100,
    });
    expect(cap(0.001, 1e6, { input: 1 }, 100)).toMatchObject({ refused: true });
  });
});

describe('InputTokenBound', () => {
  it('counts UTF-8 bytes (never fewer than a byte-level tokenizer makes), then calibrates', () => {
    const bound = new InputTokenBound(fixedRequestBytes('sys', []));
    expect(bound.of([{ role: 'user', content: 'héllo 世界' }])).toBeGreaterThanOrEqual(
      Buffer.byteLength('syshéllo 世界'),
    );
    bound.calibrate(7);
    const grown = [
      { role: 'user' as const, content: 'héllo 世界' },
      { role: 'assistant' as const, content: 'abcd' },
    ];
    // The provider's count for the first request, plus the bytes added since (4, and 8 for the message).
    expect(bound.of(grown)).toBe(7 + 4 + 8);
  });

  it('counts the tools a request offers', () => {
    const tools = [{ name: 't', description: 'd', schema: { type: 'object' } }];
    expect(fixedRequestBytes('', tools)).toBeGreaterThan(fixedRequestBytes('', []) + 1000);
  });
});
