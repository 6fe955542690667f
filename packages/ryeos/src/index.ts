export type { CliIo } from './cli/io.js';
export { runCli } from './cli/run.js';
export type { GraphOutcome, GraphRunOptions } from './graphs/index.js';
export { resumeGraph, runGraph } from './graphs/index.js';
export type { InitResult } from './init.js';
export { initWorkspace } from './init.js';
export type { OperationsOptions } from './operations.js';
export { createOperations } from './operations.js';
export { packageRoot, packageVersion, systemSpaceRoot } from './package-root.js';
export type {
  ExecuteRequest as RemoteExecuteRequest,
  ExecuteResponse as RemoteExecuteResponse,
  GetRequest as RemoteGetRequest,
  GetResponse as RemoteGetResponse,
  HasRequest as RemoteHasRequest,
  HasResponse as RemoteHasResponse,
  HealthResponse as RemoteHealthResponse,
  PublicKeyResponse as RemotePublicKeyResponse,
  PushRequest as RemotePushRequest,
  PushResponse as RemotePushResponse,
  PutRequest as RemotePutRequest,
  PutResponse as RemotePutResponse,
  RemoteErrorBody,
  RemoteItemType,
  RemoteThreadRow,
  ThreadsResponse as RemoteThreadsResponse,
  TransportEntry,
  TransportKind,
} from './remote/protocol.js';
export {
  API_KEY_PREFIX,
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_MAX_USER_STORAGE_BYTES,
  REMOTE_THREAD_ID,
  snapshotSigningText,
} from './remote/protocol.js';
export type {
  Envelope,
  ExecuteRequest,
  LoadEnvelope,
  LoadRequest,
  RyeOptions,
  SearchEnvelope,
  SearchRequest,
} from './rye.js';
export { createRye, Rye } from './rye.js';
export type { SignEnvelope } from './sign.js';
export { signEnvelope } from './sign.js';
