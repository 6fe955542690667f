/**
 * The moment a thread's first model request is on its way: work the request does not need (the
 * palette's tool workers) starts then, so it does not hold the request back in a fresh process.
 */
import type { LanguageModel, ModelRequest, StreamPart } from '../provider/types.js';

/**
 * `model`, calling `then` once, when its first request has been handed to the network; a model
 * that does not report it (not HTTP) calls it at its first answer part, or when its first stream ends.
 */
export function onFirstRequest(model: LanguageModel, then: () => void): LanguageModel {
  let pending = true;
  const fire = (): void => {
    if (!pending) return;
    pending = false;
    then();
  };
  return {
    providerId: model.providerId,
    modelId: model.modelId,
    stream: (request) => (pending ? firstStream(model, request, fire) : model.stream(request)),
  };
}

async function* firstStream(
  model: LanguageModel,
  request: ModelRequest,
  fire: () => void,
): AsyncGenerator<StreamPart> {
  const onSent = request.onSent;
  const sent = (): void => {
    fire();
    onSent?.();
  };
  try {
    for await (const part of model.stream({ ...request, onSent: sent })) {
      fire();
      yield part;
    }
  } finally {
    fire();
  }
}
