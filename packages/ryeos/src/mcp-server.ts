#!/usr/bin/env node
/**
 * `ryeos-mcp`: serves search, load, execute and sign over MCP — stdio by default,
 * Streamable HTTP with `--http [--port N] [--host H]` (127.0.0.1 unless told otherwise).
 * In stdio mode stdout carries JSON-RPC only; everything else goes to stderr.
 */
import { flushTracing } from '@ryeos/lillux';
import { runMcpServer } from './mcp/run.js';

process.exitCode = await runMcpServer(process.argv.slice(2));
// The spans an OTLP export still buffers go out before the server ends (nothing when unused).
await flushTracing();
