/**
 * In stdio mode nothing but JSON-RPC may reach stdout. Drive the built server with raw
 * newline-delimited JSON-RPC through every tool and an error path, and check every byte.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MCP_SERVER, rye, tempProject } from './helpers.js';

describe('ryeos-mcp stdio hygiene', () => {
  it('writes only JSON-RPC messages to stdout', async () => {
    const t = await tempProject();
    await t.write(
      'tools/noisy/talk.js',
      'export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "noisy";\nexport const __tool_description__ = "Talks on stderr";\nconsole.error(["stderr", "only", "marker"].join("-"));\nconsole.log(JSON.stringify({ success: true }));\n',
    );
    await t.write(
      'knowledge/noisy/k.md',
      '```yaml\nname: k\ntitle: K\nentry_type: reference\nversion: "1.0.0"\ncategory: noisy\n```\n\nBody\n',
    );
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    expect((await rye(['sign', 'tool:noisy/talk', '--project', t.project], { env: t.env })).code).toBe(0);

    const server = spawn(process.execPath, [MCP_SERVER], {
      env: { PATH: process.env.PATH ?? '', USER_SPACE: t.user, RYE_DEBUG: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    server.stdout.on('data', (c) => {
      stdout += c;
    });
    server.stderr.on('data', (c) => {
      stderr += c;
    });
    const project_path = t.project;
    const calls: [string, Record<string, unknown>][] = [
      ['search', { scope: 'tool', query: 'talk' }],
      ['load', { item_id: 'tool:noisy/talk' }],
      ['execute', { item_id: 'tool:noisy/talk' }],
      ['execute', { item_id: 'knowledge:noisy/k' }],
      ['sign', { item_id: 'knowledge:noisy/k' }],
      ['execute', { item_id: 'tool:noisy/missing' }],
      ['execute', { item_id: 'tool:noisy/talk', thread: 'fork' }],
      ['nonexistent', {}],
    ];
    const messages = [
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      ...calls.map(([name, args], i) => ({
        jsonrpc: '2.0',
        id: i + 2,
        method: 'tools/call',
        params: { name, arguments: { project_path, ...args } },
      })),
    ];
    for (const message of messages) server.stdin.write(`${JSON.stringify(message)}\n`);
    const lastId = calls.length + 1;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out; stdout so far:\n${stdout}\nstderr:\n${stderr}`)),
        30_000,
      );
      // Requests are handled concurrently: wait until every id has been answered.
      server.stdout.on('data', () => {
        const answered = new Set(
          stdout
            .split('\n')
            .filter(Boolean)
            .map((line) => (JSON.parse(line) as { id?: number }).id),
        );
        if (Array.from({ length: lastId + 1 }, (_, id) => answered.has(id)).every(Boolean)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    server.stdin.end();
    await new Promise((resolve) => server.on('close', resolve));

    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(stdout.endsWith('\n')).toBe(true);
    for (const line of lines) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      expect(message.jsonrpc, line).toBe('2.0');
    }
    const byId = new Map(
      lines
        .map((l) => JSON.parse(l) as { id?: number; result?: { isError?: boolean } })
        .map((m) => [m.id, m]),
    );
    expect(byId.get(4)?.result?.isError).toBeFalsy(); // the noisy tool ran
    expect(byId.get(7)?.result?.isError).toBe(true); // missing tool
    expect(byId.get(8)?.result?.isError).toBe(true); // fork on a tool
    expect(byId.get(9)?.result?.isError).toBe(true); // unknown tool name
    // The tool's stderr never reaches the protocol stream (its source spells it differently).
    expect(stdout).not.toContain('stderr-only-marker');
  }, 60_000);
});
