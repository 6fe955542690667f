/**
 * For models without native tool use (`tool_use.mode: text_parsed`): the tools go in the system
 * prompt, with the one call form the text parser reads first.
 */
import type { ToolDefinition } from '../provider/types.js';

export function textModeToolsPrompt(tools: readonly ToolDefinition[]): string {
  const list = tools
    .map((tool) => `- ${tool.name}: ${tool.description}\n  input schema: ${JSON.stringify(tool.schema)}`)
    .join('\n');
  return [
    '## Tools',
    'To call a tool, write the call on its own, with its input as one JSON object:',
    '<tool_use id="call_1" name="TOOL_NAME">{"argument": "value"}</tool_use>',
    'Give each call a new id. You may make several calls in one answer; their results come back in the next message.',
    '',
    list,
  ].join('\n');
}
