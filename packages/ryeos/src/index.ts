export type { CliIo } from './cli/run.js';
export { runCli } from './cli/run.js';
export type { InitResult } from './init.js';
export { initWorkspace } from './init.js';
export type { OperationsOptions } from './operations.js';
export { createOperations, signEnvelope } from './operations.js';
export { packageRoot, packageVersion, systemSpaceRoot } from './package-root.js';
export type { Envelope, ExecuteRequest, RyeOptions } from './rye.js';
export { createRye, Rye } from './rye.js';
