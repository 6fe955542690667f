/**
 * The four MCP tools ryeos serves. Their names, descriptions and JSON Schemas are owned by
 * `@ryeos/lillux` (pure data the threads layer's palette shares) and re-exported as the same
 * objects; the server's usage guidance is the MCP adapter's own.
 */
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
} from '@ryeos/lillux/primaries';
export {
  EXECUTE_SCHEMA,
  LOAD_SCHEMA,
  SEARCH_SCHEMA,
  SIGN_SCHEMA,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  toolSchema,
  withoutProjectPath,
} from '@ryeos/lillux/primaries';

/** Usage guidance for the whole server, sent as the MCP `instructions` of the initialize reply. */
export const SERVER_INSTRUCTIONS = `RYE OS holds signed, reusable directives (workflows for you to follow), tools (code that runs) and knowledge (reference docs) in three spaces: project (<project>/.ai/), user (~/.ai/) and system (shipped, read-only). Project shadows user, user shadows system.
Tools: search finds ids; load inspects or copies an item; execute runs it; sign signs what you create, edit or copy.
- Always pass project_path: the absolute root of the user's project.
- "rye execute X" from the user means: call execute with item_id X right away, with the remaining words as parameters. Never search first or ask.
- Otherwise search before guessing an id. When execute returns your_directions, follow them at once.
- Replies are JSON. status "error" explains the fix (unknown inputs list the valid ones; a hint ends with the call that fixes it, e.g. sign for an integrity error).
- To learn how RYE works, search knowledge: system knowledge is the manual.`;
