// Shared by the benches: the trivial JS tool they run, small statistics helpers, a /proc RSS
// reader, and a tiny MCP client over a server's stdio.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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

const RYEOS = join(import.meta.dirname, '..', '..', 'packages', 'ryeos');

/** The system bundles the facade registers: its own, then the threads and executor layers'. */
export const SYSTEM_BUNDLES = [
  { id: 'ryeos', root: RYEOS },
  { id: 'ryeos-threads', root: join(RYEOS, '..', 'threads') },
  { id: 'ryeos-executor', root: join(RYEOS, '..', 'executor') },
];

/** The `rye` command as installed: the file package.json names as its bin. */
export const RYE_BIN = join(RYEOS, JSON.parse(readFileSync(join(RYEOS, 'package.json'), 'utf8')).bin.rye);

export const round = (value, digits = 2) => Number(value.toFixed(digits));

/** The `p`-th percentile (0–100, nearest rank) of `values`. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Resident memory of a live process in MB (VmRSS from /proc, Linux only). */
export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024);
}

/**
 * A tiny newline-delimited JSON-RPC client over a child's stdio (`node server ...args`).
 * Requests carry their own ids, so many may be in flight at once; only responses (messages
 * without a `method`) settle them, and all pending ones reject if the server exits.
 */
export function stdioClient(server, env, args = []) {
  const child = spawn(process.execPath, [server, ...args], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdout.setEncoding('utf8');
  let buffer = '';
  const waiting = new Map();
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let nl = buffer.indexOf('\n');
    while (nl !== -1) {
      const message = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (message.method === undefined) {
        waiting.get(message.id)?.resolve(message);
        waiting.delete(message.id);
      }
      nl = buffer.indexOf('\n');
    }
  });
  child.on('close', (code, signal) => {
    for (const { reject } of waiting.values())
      reject(new Error(`${server} exited (${signal ?? code}) with a request pending`));
    waiting.clear();
  });
  let id = 0;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      waiting.set(n, { resolve, reject });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`);
    });
  const notify = (method) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  const close = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.on('close', resolve);
      child.stdin.end();
    });
  return { request, notify, close, pid: child.pid, child };
}
