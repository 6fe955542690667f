export type { OperationContext, OperationResult, ProgressUpdate, RyeOperations } from './operations.js';
export type { ToolAnnotations } from './output-schemas.js';
export { OUTPUT_SCHEMAS, TOOL_ANNOTATIONS } from './output-schemas.js';
export type { ServerInfo } from './server.js';
export { createRyeServer } from './server.js';
export type {
  ArgsOf,
  ExecuteArgs,
  InputSchema,
  JsonSchema,
  LoadArgs,
  SearchArgs,
  SignArgs,
  ToolArgs,
  ToolDefinition,
  ToolName,
  ValueOf,
} from './tools.js';
export {
  EXECUTE_SCHEMA,
  LOAD_SCHEMA,
  SEARCH_SCHEMA,
  SERVER_INSTRUCTIONS,
  SIGN_SCHEMA,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  toolSchema,
  withoutProjectPath,
} from './tools.js';
export type {
  HttpServeOptions,
  HttpServerHandle,
  StdioServeOptions,
  StdioServerHandle,
} from './transports.js';
export { isDefaultBindHost, isLoopbackHost, serveHttp, serveStdio } from './transports.js';
