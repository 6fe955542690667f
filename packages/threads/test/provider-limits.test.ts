/**
 * A provider response cannot grow without end (attack round on issue 13: a 300 MB stream took
 * the process to 2.3 GB). Past `maxResponseBytes` the call fails, streamed or whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '../src/provider/anthropic.js';
import { type ReplayServer, startReplayServer } from '../src/testing.js';
import { allParts, lastError } from './support/provider.js';

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = {
  model: 'replay-model',
  system: '',
  messages: [{ role: 'user' as const, content: 'hi' }],
  tools: [],
  maxTokens: 100,
};

describe('response size', () => {
  for (const stream of [true, false]) {
    it(`fails a ${stream ? 'streamed' : 'whole'} response larger than maxResponseBytes`, async () => {
      server = await startReplayServer({ turns: [{ text: 'x'.repeat(50_000) }, { text: 'small' }] });
      const model = createAnthropicModel({
        providerId: 'replay',
        modelId: 'replay-model',
        url: `${server.url}/v1/messages`,
        headers: {},
        timeoutMs: 5000,
        stream,
        maxResponseBytes: 20_000,
      });
      const error = lastError(await allParts(model.stream(request)));
      expect(error.message).toMatch(/larger than 20000 bytes/);
      expect(error.retryable).toBe(false);
      // A response under the cap is read as usual.
      const parts = await allParts(model.stream(request));
      expect(parts.at(-1)).toMatchObject({ type: 'finish' });
    });
  }
});
