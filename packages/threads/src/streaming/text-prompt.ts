/**
 * For models without native tool use (`tool_use.mode: text_parsed`): the tools go in the system
 * prompt, with the one call form the text parser reads first.
 */
import type { ChatMessage, ToolDefinition } from '../provider/types.js';

export function textModeToolsPrompt(tools: readonly ToolDefinition[]): string {
  const list = tools
    .map((tool) => `- ${tool.name}: ${tool.description}\n  input schema: ${JSON.stringify(tool.schema)}`)
    .join('\n');
  return [
    '## Tools',
    'To call a tool, write the call on its own, with its input as one JSON object:',
    '<tool_use id="call_1" name="TOOL_NAME">{"argument": "value"}</tool_use>',
    'Give each call a new id. You may make several calls in one answer; their results come back in the next message, each in a <tool_result id="..."> block.',
    '',
    list,
  ].join('\n');
}

/**
 * The conversation as a model without native tools reads it: its own calls back in the text form
 * it wrote them in, and their results as a user message (a server without tool support rejects
 * `tool` roles and `tool_use` blocks). The runner's own message list keeps the native shape.
 */
/** An attribute value that cannot end its quotes or open a tag. */
function attribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A result's text, unable to close its block or fake another (a tool's output is data). */
function body(text: string): string {
  return text.replace(/<(\/?)(tool_result|tool_use)/gi, '&lt;$1$2');
}

export function textModeMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const calls = (message.tool_calls ?? []).map(
        (call) =>
          `<tool_use id="${attribute(call.id)}" name="${attribute(call.name)}">${JSON.stringify(call.input)}</tool_use>`,
      );
      out.push({ role: 'assistant', content: [message.content, ...calls].filter(Boolean).join('\n') });
      continue;
    }
    const text =
      message.role === 'tool'
        ? `<tool_result id="${attribute(message.tool_call_id)}"${message.is_error ? ' error="true"' : ''}>\n${body(message.content)}\n</tool_result>`
        : message.content;
    const last = out.at(-1);
    if (last?.role === 'user') last.content = `${last.content}\n\n${text}`;
    else out.push({ role: 'user', content: text });
  }
  return out;
}
