export type { CliIo } from './cli/io.js';
export { runCli } from './cli/run.js';
export type { InitResult } from './init.js';
export { initWorkspace } from './init.js';
export type { OperationsOptions } from './operations.js';
export { createOperations } from './operations.js';
export { packageRoot, packageVersion, systemSpaceRoot } from './package-root.js';
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
