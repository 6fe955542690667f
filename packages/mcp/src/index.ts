export type { ToolDefinition, ToolName } from './tools.js';
export { TOOL_DEFINITIONS, TOOL_NAMES } from './tools.js';
