/**
 * A run starts what its first request does not need (the palette's tool workers) once that
 * request is out: `onFirstRequest` calls back once, when the model says the request was sent, or
 * at its first answer part when it does not say; never again on later turns.
 */
import { describe, expect, it } from 'vitest';
import type { LanguageModel, ModelRequest, StreamPart } from '../src/provider/types.js';
import { onFirstRequest } from '../src/runner/first-request.js';

const request: ModelRequest = { model: 'm', system: '', messages: [], tools: [], maxTokens: 10 };

/** A model that logs what happens, and reports its request as sent when `reportsSent`. */
function scriptedModel(log: string[], reportsSent: boolean): LanguageModel {
  return {
    providerId: 'test',
    modelId: 'm',
    async *stream(req): AsyncGenerator<StreamPart> {
      log.push('request');
      if (reportsSent) req.onSent?.();
      log.push('answer');
      yield { type: 'text-delta', text: 'hi' };
      yield { type: 'finish', reason: 'end_turn' };
    },
  };
}

async function drain(model: LanguageModel, req: ModelRequest, log: string[]): Promise<void> {
  for await (const part of model.stream(req)) log.push(`part ${part.type}`);
}

describe('onFirstRequest', () => {
  it('calls back once the first request is sent, before its answer, and only once', async () => {
    const log: string[] = [];
    const model = onFirstRequest(scriptedModel(log, true), () => log.push('then'));
    let ownSent = 0;
    await drain(model, { ...request, onSent: () => ownSent++ }, log);
    await drain(model, request, log);
    expect(log.slice(0, 3)).toEqual(['request', 'then', 'answer']);
    expect(log.filter((entry) => entry === 'then')).toHaveLength(1);
    // The request's own listener still hears it.
    expect(ownSent).toBe(1);
  });

  it('calls back at the first answer part of a model that does not say when it sent', async () => {
    const log: string[] = [];
    const model = onFirstRequest(scriptedModel(log, false), () => log.push('then'));
    await drain(model, request, log);
    expect(log.slice(0, 4)).toEqual(['request', 'answer', 'then', 'part text-delta']);
  });

  it('calls back when a first stream ends with no part', async () => {
    let called = 0;
    const silent: LanguageModel = { providerId: 'test', modelId: 'm', async *stream() {} };
    await drain(
      onFirstRequest(silent, () => called++),
      request,
      [],
    );
    expect(called).toBe(1);
  });
});
