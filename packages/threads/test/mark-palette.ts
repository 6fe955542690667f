/** A palette of one marking tool and the directive return, and a loop over it, for loop tests that count calls. */
import { createAnthropicModel } from '../src/provider/anthropic.js';
import type { LoopContext } from '../src/runner/loop.js';
import type { Palette, PaletteEntry } from '../src/runner/palette.js';
import { DIRECTIVE_RETURN_ID } from '../src/runner/palette.js';
import type { ReplayScript } from '../src/testing/script.js';

const ENTRIES: PaletteEntry[] = [
  {
    name: 'acme_mark',
    description: 'mark',
    schema: { type: 'object', properties: {} },
    kind: 'tool',
    itemId: 'acme/mark',
    primary: 'execute',
  },
  {
    name: 'rye_directive_return',
    description: 'return',
    schema: { type: 'object', properties: {} },
    kind: 'directive_return',
    itemId: DIRECTIVE_RETURN_ID,
    primary: 'execute',
  },
];

export const MARK_PALETTE: Palette = {
  entries: ENTRIES,
  byName: new Map(ENTRIES.map((e) => [e.name, e])),
  warnings: [],
};

/** The model's call of the marking tool, tagged. */
export const mark = (tag: string) => ({ name: 'acme_mark', id: `toolu_${tag}`, input: { tag } });

/** Two marked calls, then the directive's return. */
export const TWO_MARKS_THEN_RETURN: ReplayScript = {
  turns: [
    { tool_calls: [mark('a')] },
    { tool_calls: [mark('b')] },
    { tool_calls: [{ name: 'rye_directive_return', id: 'toolu_done', input: { answer: 'ok' } }] },
  ],
};

/** What a loop over the marking palette needs besides its log, hooks and callbacks. */
export function markLoopBase(serverUrl: string) {
  return {
    threadId: 'acme/t/t-1',
    directiveId: 'acme/t',
    model: createAnthropicModel({
      providerId: 'replay',
      modelId: 'replay-model',
      headers: {},
      timeoutMs: 5000,
      stream: true,
      url: `${serverUrl}/v1/messages`,
    }),
    system: 'You are a test.',
    messages: [{ role: 'user', content: 'Go.' }],
    palette: MARK_PALETTE,
    outputs: [{ name: 'answer', required: true }],
    limits: { turns: 10, tokens: 1e9, spend: 10, duration_seconds: 60 },
    maxTokens: 1000,
    contextWindow: 200_000,
    contextThreshold: 0.9,
    nativeTools: true,
  } satisfies Partial<LoopContext>;
}
