export type { OperationContext, OperationResult, ProgressUpdate, RyeOperations } from './operations.js';
export type { ServerInfo } from './server.js';
export { createRyeServer } from './server.js';
export type { JsonSchema, ToolDefinition, ToolName } from './tools.js';
export { SERVER_INSTRUCTIONS, TOOL_DEFINITIONS, TOOL_NAMES } from './tools.js';
export type {
  HttpServeOptions,
  HttpServerHandle,
  StdioServeOptions,
  StdioServerHandle,
} from './transports.js';
export { isDefaultBindHost, isLoopbackHost, serveHttp, serveStdio } from './transports.js';
