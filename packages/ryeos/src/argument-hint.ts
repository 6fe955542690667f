/**
 * The hint of an operation's arguments refused by their schema, as an MCP client or the API reads
 * it. The CLI's user typed flags, not arguments: the CLI says it in those words instead.
 */
export const FIX_ARGUMENTS_HINT =
  'Fix the arguments listed (each tool lists its parameters in its input schema).';
