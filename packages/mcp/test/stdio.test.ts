import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';

// These tests run the BUILT package (dist/) in a child process, as `ryeos-mcp` does.
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const script = join(packageDir, 'test', 'fixtures', 'stdio-server.mjs');
const built = join(packageDir, 'dist', 'index.js');

beforeAll(() => {
  if (!existsSync(built)) throw new Error('dist/index.js is missing: run tsup (pnpm build) before the tests');
  const newestSource = Math.max(
    ...readdirSync(join(packageDir, 'src')).map((f) => statSync(join(packageDir, 'src', f)).mtimeMs),
  );
  if (statSync(built).mtimeMs < newestSource) {
    throw new Error('dist/index.js is older than src/: run tsup (pnpm build) before the tests');
  }
});

describe('serveStdio', () => {
  it('serves the tools to the SDK stdio client', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [script], stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'stdio-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'rye', version: '0.0.1-test' });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['search', 'load', 'execute', 'sign']);
      const result = await client.callTool({ name: 'load', arguments: { item_id: 'tool:rye/bash' } });
      const text = (result.content as Array<{ text: string }>)[0]!.text;
      expect(JSON.parse(text)).toEqual({
        status: 'success',
        tool: 'load',
        args: { item_id: 'tool:rye/bash' },
      });
      // stderr is its own pipe: the log line may trail the response a little.
      for (let i = 0; i < 200 && !stderr.includes('[fake] load called'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(stderr).toContain('[fake] load called');
    } finally {
      await client.close();
    }
  });

  it('writes nothing but JSON-RPC to stdout, and exits when stdin ends', async () => {
    const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const responses = (): Array<Record<string, unknown>> =>
      stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const waitFor = async (id: number): Promise<Record<string, unknown>> => {
      for (let i = 0; i < 500; i++) {
        const found = stdout
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => {
            try {
              return JSON.parse(l) as Record<string, unknown>;
            } catch {
              return undefined;
            }
          })
          .find((m) => m?.['id'] === id);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no response ${id}; stdout=${stdout} stderr=${stderr}`);
    };
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);

    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    await waitFor(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'execute', arguments: { item_id: 'rye/bash', project_path: '/p' } },
    });
    send({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'execute', arguments: { item_id: 'boom' } },
    });
    const list = await waitFor(2);
    const call = await waitFor(3);
    const boom = await waitFor(4);
    child.stdin.end();
    expect(await exited).toBe(0);

    // Every line on stdout is a JSON-RPC 2.0 message; the fake's console.log/error went to stderr.
    for (const message of responses()) expect(message['jsonrpc']).toBe('2.0');
    expect(stdout).not.toContain('[fake]');
    expect(stderr).toContain('[fake] execute called');
    expect(stderr).toContain('[fake] execute log line');

    expect((list['result'] as { tools: unknown[] }).tools).toHaveLength(4);
    const callResult = call['result'] as { content: Array<{ text: string }>; isError?: boolean };
    expect(JSON.parse(callResult.content[0]!.text)).toMatchObject({ status: 'success', tool: 'execute' });
    const boomResult = boom['result'] as { content: Array<{ text: string }>; isError?: boolean };
    expect(boomResult.isError).toBe(true);
    expect(JSON.parse(boomResult.content[0]!.text)).toEqual({
      status: 'error',
      error: 'kaboom',
      error_type: 'internal',
    });
  });
});
