/**
 * What an HTTP wire format plugs into the shared adapter (`http-model.ts`): how a request becomes
 * a body, how SSE payloads become parts, how a whole JSON response becomes parts.
 */
import { clipText } from '@ryeos/lillux';
import type { HttpProviderConfig } from './http-config.js';
import type { ModelRequest, ProviderCallErrorInfo, StreamPart } from './types.js';

/** Turns SSE `data` payloads into parts, in order. */
export interface StreamAssembler {
  /** Parts completed by this payload. */
  push(data: string): StreamPart[];
  /** True once the stream has ended properly (finish or error yielded): stop reading. */
  readonly done: boolean;
  /** The body ended: the closing parts (a `finish`, or an `error` when the stream was cut short). */
  end(): StreamPart[];
}

export interface AssemblerContext {
  providerId: string;
  requestId: string | undefined;
}

export interface WireFormat {
  /** `anthropic-version` and such, added when the config does not set them. */
  defaultHeaders: Record<string, string>;
  buildBody(request: ModelRequest, config: HttpProviderConfig): Record<string, unknown>;
  createAssembler(context: AssemblerContext): StreamAssembler;
  /** A whole (non-streaming) JSON response → parts, ending with `finish`; or why it cannot be read. */
  parseWhole(body: unknown, context: AssemblerContext): StreamPart[] | ProviderCallErrorInfo;
}

/** The error of a stream that ended before its proper end (spec: a disconnect). */
export function cutShortInfo(context: AssemblerContext, what: string): ProviderCallErrorInfo {
  const info: ProviderCallErrorInfo = {
    providerId: context.providerId,
    message: `The stream from provider ${context.providerId} ended before ${what}: the connection was probably cut`,
    httpStatus: 0,
    errorClass: 'ConnectionError',
    retryable: true,
  };
  if (context.requestId !== undefined) info.requestId = context.requestId;
  return info;
}

/** The error of a payload that is not JSON. */
export function badPayloadInfo(context: AssemblerContext, data: string): ProviderCallErrorInfo {
  const info: ProviderCallErrorInfo = {
    providerId: context.providerId,
    message: `Provider ${context.providerId} sent an SSE event that is not JSON: ${clipText(data, 200)}`,
    httpStatus: 200,
    errorClass: 'ProviderCallError',
    retryable: false,
  };
  if (context.requestId !== undefined) info.requestId = context.requestId;
  return info;
}
