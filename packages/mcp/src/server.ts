import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { withMcpHints } from './fix-call.js';
import type { OperationContext, OperationResult, ProgressUpdate, RyeOperations } from './operations.js';
import { OUTPUT_SCHEMAS, TOOL_ANNOTATIONS } from './output-schemas.js';
import { checkStructured } from './structured-content.js';
import { SERVER_INSTRUCTIONS, TOOL_DEFINITIONS, TOOL_NAMES, type ToolName } from './tools.js';

export interface ServerInfo {
  /** Server name reported to clients; default `rye`. */
  name?: string;
  version: string;
  /** Log failures of the operations to stderr with their stack (the entry point's RYE_DEBUG). */
  debug?: boolean;
}

const TOOLS = TOOL_DEFINITIONS.map((tool) => ({
  name: tool.name,
  title: TOOL_ANNOTATIONS[tool.name].title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: OUTPUT_SCHEMAS[tool.name],
  annotations: TOOL_ANNOTATIONS[tool.name],
})) as unknown as ListToolsResult['tools'];

function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/**
 * The largest reply sent: MCP clients commonly read at most 10 MB per message (the SDK client's
 * buffer) and a bigger one ends the session. The reply goes twice (as text for older clients and
 * as `structuredContent`), so each copy gets half. Tools are capped lower already; this is the
 * last guard for anything else.
 */
export const MAX_REPLY_CHARS = 8 * 1024 * 1024;

/** The reply to a call of `tool` (undefined: a tool this server does not offer, so no schema applies). */
function reply(result: OperationResult, tool: ToolName | undefined): CallToolResult {
  let structured: Record<string, unknown> = withMcpHints(result);
  let text = JSON.stringify(structured);
  if (text.length > MAX_REPLY_CHARS / 2) {
    const kept = MAX_REPLY_CHARS / 4;
    structured = {
      status: result.status,
      ...(result.status === 'error' ? { error: result.error, error_type: result.error_type } : {}),
      truncated: true,
      note: `The result was ${text.length} characters; only the first ${kept} are kept in 'partial'`,
      partial: text.slice(0, kept),
    };
    text = JSON.stringify(structured);
  }
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  const checked = tool ? checkStructured(tool, structured) : { structured };
  if (checked.problem) {
    // stderr only: in stdio mode stdout carries JSON-RPC and nothing else.
    console.error(`[rye mcp] ${tool} reply does not match its outputSchema: ${checked.problem}`);
  }
  return {
    content,
    ...(checked.structured ? { structuredContent: checked.structured } : {}),
    ...(result.status === 'error' ? { isError: true } : {}),
  };
}

function internalError(tool: ToolName, error: unknown, debug: boolean): CallToolResult {
  if (debug) {
    // stderr only: in stdio mode stdout carries JSON-RPC and nothing else.
    console.error(`[rye mcp] ${tool} failed:`, error instanceof Error ? (error.stack ?? error) : error);
  }
  const message = error instanceof Error ? error.message : String(error);
  return reply({ status: 'error', error: message || 'Internal error', error_type: 'internal' }, tool);
}

/**
 * A low-level MCP `Server` offering exactly `search`, `load`, `execute` and `sign`, each routed to
 * `operations` with the client's raw arguments. Connect it to a transport (see `serveStdio`,
 * `serveHttp`) or any SDK transport.
 */
export function createRyeServer(operations: RyeOperations, info: ServerInfo): Server {
  const server = new Server(
    { name: info.name ?? 'rye', version: info.version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    if (!isToolName(name))
      return reply(
        {
          status: 'error',
          error: `Unknown tool: ${name}`,
          error_type: 'validation',
          hint: `This server offers ${TOOL_NAMES.join(', ')}.`,
        },
        undefined,
      );
    const args = request.params.arguments ?? {};

    let finished = false;
    const progressToken = request.params._meta?.progressToken;
    const context: OperationContext = { signal: extra.signal };
    if (progressToken !== undefined) {
      context.reportProgress = (update: ProgressUpdate) => {
        // A notification after the reply (or after cancellation) would reach a client that no
        // longer knows the token.
        if (finished || extra.signal.aborted) return;
        const params: { progressToken: string | number; progress: number; total?: number; message?: string } =
          { progressToken, progress: update.progress };
        if (update.total !== undefined) params.total = update.total;
        if (update.message !== undefined) params.message = update.message;
        extra.sendNotification({ method: 'notifications/progress', params }).catch(() => {});
      };
    }

    try {
      const result: unknown = await operations[name](args, context);
      if (result === null || typeof result !== 'object' || Array.isArray(result)) {
        throw new Error(`${name} returned no result object`);
      }
      return reply(result as OperationResult, name);
    } catch (error) {
      return internalError(name, error, info.debug === true);
    } finally {
      finished = true;
    }
  });

  return server;
}
