/**
 * A provider that does not serve the model asked for says so in its own words; the failure then
 * carries a hint a person can act on: the thread's model, or `tier_mapping` in .ai/config/agent/agent.yaml
 * (issue 28, point 20). The bodies are the providers' real ones for an unknown model.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '../src/provider/anthropic.js';
import { httpErrorInfo, modelNotFoundHint, streamErrorInfo } from '../src/provider/errors.js';
import { createOpenAIModel } from '../src/provider/openai.js';
import type { ModelRequest } from '../src/provider/types.js';
import { type ReplayServer, startReplayServer } from '../src/testing.js';
import { allParts, lastError, type RawServer, rawServer } from './support/provider.js';

let server: ReplayServer | undefined;
let raw: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  await raw?.close();
  server = undefined;
  raw = undefined;
});

const request: ModelRequest = {
  model: 'no-such-model',
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'Hello' }],
  tools: [],
  maxTokens: 256,
};

const base = { timeoutMs: 5000, stream: true };
const noHeaders = { get: () => null };

function expectModelHint(hint: string | undefined) {
  expect(hint).toContain("the thread's model");
  expect(hint).toContain('tier_mapping');
  expect(hint).toContain('.ai/config/agent/agent.yaml');
}

describe('a model the provider does not serve', () => {
  it("Anthropic's 404 not_found_error carries the model / tier_mapping hint", async () => {
    server = await startReplayServer({
      turns: [{ error: { status: 404, type: 'not_found_error', message: 'model: claude-nope-1' } }],
    });
    const model = createAnthropicModel({
      ...base,
      providerId: 'anthropic',
      modelId: 'claude-nope-1',
      url: `${server.url}/v1/messages`,
      headers: { 'x-api-key': 'sk-test' },
    });
    const error = lastError(await allParts(model.stream(request)));
    expect(error).toMatchObject({
      httpStatus: 404,
      code: 'not_found_error',
      message: 'model: claude-nope-1',
      retryable: false,
    });
    expectModelHint(error.hint);
  });

  it("OpenAI's 404 model_not_found carries it too", async () => {
    server = await startReplayServer({
      turns: [
        {
          error: {
            status: 404,
            type: 'invalid_request_error',
            code: 'model_not_found',
            message: 'The model `gpt-nope` does not exist or you do not have access to it.',
          },
        },
      ],
    });
    const model = createOpenAIModel({
      ...base,
      providerId: 'openai',
      modelId: 'gpt-nope',
      url: `${server.url}/v1/chat/completions`,
      headers: { authorization: 'Bearer sk-test' },
    });
    const error = lastError(await allParts(model.stream(request)));
    expect(error).toMatchObject({ httpStatus: 404, code: 'model_not_found', retryable: false });
    expectModelHint(error.hint);
  });

  it("an OpenAI-compatible server's 404 that names the model (Ollama) carries it", async () => {
    raw = await rawServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: 'model "llama9" not found, try pulling it first',
            type: 'api_error',
            param: null,
            code: null,
          },
        }),
      );
    });
    const model = createOpenAIModel({
      ...base,
      providerId: 'openai',
      modelId: 'llama9',
      url: `${raw.url}/v1/chat/completions`,
      headers: {},
    });
    expectModelHint(lastError(await allParts(model.stream(request))).hint);
  });

  it('a 404 that does not name a model (a wrong URL) gets no model hint', () => {
    expect(httpErrorInfo('openai', 404, noHeaders, '404 page not found').hint).toBeUndefined();
    expect(modelNotFoundHint(404, 'not_found_error', 'Not found')).toBeUndefined();
    expect(modelNotFoundHint(400, 'invalid_request_error', 'model: max_tokens too large')).toBeUndefined();
  });

  it('an in-stream not_found_error naming the model carries it', () => {
    const info = streamErrorInfo(
      'anthropic',
      { type: 'error', error: { type: 'not_found_error', message: 'model: claude-nope-1' } },
      'req_1',
    );
    expect(info).toMatchObject({ httpStatus: 404, retryable: false });
    expectModelHint(info.hint);
  });
});
