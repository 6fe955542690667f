// Shared by the benches: the trivial JS tool they run, small statistics helpers, and a tiny
// MCP client over a server's stdio.
import { spawn } from 'node:child_process';

/** A node tool that reads its params and echoes them: the cheapest real tool there is. */
export const NOOP_TOOL = `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "bench";
export const __tool_description__ = "Echo the parameters";
let raw = '';
for await (const chunk of process.stdin) raw += chunk;
console.log(JSON.stringify({ success: true, echo: JSON.parse(raw || '{}') }));
`;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const round = (value, digits = 2) => Number(value.toFixed(digits));

/** A tiny newline-delimited JSON-RPC client over a child's stdio. */
export function stdioClient(server, env) {
  const child = spawn(process.execPath, [server], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  let buffer = '';
  const waiting = new Map();
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let nl = buffer.indexOf('\n');
    while (nl !== -1) {
      const message = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
      nl = buffer.indexOf('\n');
    }
  });
  let id = 0;
  const request = (method, params) =>
    new Promise((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`);
    });
  const notify = (method) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  const close = () =>
    new Promise((resolve) => {
      child.on('close', resolve);
      child.stdin.end();
    });
  return { request, notify, close, pid: child.pid };
}
