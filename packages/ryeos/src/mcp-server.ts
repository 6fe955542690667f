#!/usr/bin/env node
/**
 * `ryeos-mcp`: serves search, load, execute and sign over MCP. The server itself arrives with
 * the MCP issue; until then it says so on stderr (stdout is reserved for JSON-RPC) and exits 1.
 */
process.stderr.write('ryeos-mcp: the MCP server is not available in this version yet.\n');
process.exitCode = 1;
