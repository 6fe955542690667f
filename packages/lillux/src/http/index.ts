export { httpRequest } from './request.js';
export { callbackSink, fileSink, ReturnSink } from './sinks.js';
export { httpStream } from './stream.js';

export type {
  EventSink,
  HttpMethod,
  HttpRequestOptions,
  HttpResult,
  HttpStreamOptions,
  HttpStreamResult,
  SinkError,
  SseEvent,
} from './types.js';
