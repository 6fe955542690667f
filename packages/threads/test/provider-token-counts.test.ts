import { describe, expect, it } from 'vitest';
import { AnthropicStreamAssembler } from '../src/provider/anthropic.js';
import { OpenAIStreamAssembler } from '../src/provider/openai.js';

// What a provider reports as usage becomes the integer counts ryeos stores, budgets and reports.
const CASES: Array<[label: string, reported: unknown, counted: number | undefined]> = [
  ['an integer as is', 57, 57],
  ['a fraction rounded up', 0.25, 1],
  ['a negative count as not reported', -1000, undefined],
  ['a string as not reported', '12', undefined],
];

describe('token counts at the provider boundary', () => {
  for (const [label, reported, counted] of CASES) {
    it(`Anthropic: ${label}`, () => {
      const a = new AnthropicStreamAssembler({ providerId: 'anthropic', requestId: 'r' });
      a.push(JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 3 } } }));
      const parts = a.push(
        JSON.stringify({
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { output_tokens: reported },
        }),
      );
      const usage = parts.find((part) => part.type === 'usage');
      if (counted === undefined) expect(usage).toBeUndefined();
      else expect(usage).toEqual({ type: 'usage', usage: { outputTokens: counted } });
    });

    it(`OpenAI: ${label}`, () => {
      const a = new OpenAIStreamAssembler({ providerId: 'openai', requestId: undefined });
      const parts = a.push(
        JSON.stringify({ choices: [], usage: { prompt_tokens: reported, completion_tokens: 6 } }),
      );
      expect(parts).toEqual([
        {
          type: 'usage',
          usage: counted === undefined ? { outputTokens: 6 } : { inputTokens: counted, outputTokens: 6 },
        },
      ]);
    });
  }
});
