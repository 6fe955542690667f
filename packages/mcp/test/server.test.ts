import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRyeServer, SERVER_INSTRUCTIONS, TOOL_DEFINITIONS } from '../src/index.js';
import { MAX_REPLY_CHARS } from '../src/server.js';
import { createFakeOperations } from './fake-operations.js';

type Fake = ReturnType<typeof createFakeOperations>;

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const content = result.content as Array<{ type: string; text: string }>;
  expect(content).toHaveLength(1);
  expect(content[0]!.type).toBe('text');
  return content[0]!.text;
}

describe('createRyeServer (in-memory transport)', () => {
  let fake: Fake;
  let client: Client;

  beforeEach(async () => {
    fake = createFakeOperations();
    const server = createRyeServer(fake.operations, { version: '9.9.9' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(clientSide);
  });

  afterEach(async () => {
    await client.close();
  });

  it('identifies itself as "rye" and sends the usage instructions', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'rye', version: '9.9.9' });
    expect(client.getInstructions()).toBe(SERVER_INSTRUCTIONS);
    expect(client.getServerCapabilities()?.tools).toBeDefined();
  });

  it('lists exactly the four tools, with schemas whose required properties exist', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search', 'load', 'execute', 'sign']);
    for (const tool of tools) {
      expect(tool.description).toBe(TOOL_DEFINITIONS.find((t) => t.name === tool.name)!.description);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema.required).toContain('project_path');
      for (const name of tool.inputSchema.required ?? []) {
        expect(tool.inputSchema.properties).toHaveProperty(name);
      }
    }
  });

  it('routes each tool to its operation with the raw arguments and replies with one JSON text', async () => {
    const args = { project_path: '/p', extra_key: [1, { a: null }] };
    const search = await client.callTool({
      name: 'search',
      arguments: { ...args, scope: 'tool', query: 'x' },
    });
    expect(JSON.parse(textOf(search))).toEqual({ results: [{ id: 'rye/bash' }], total: 1, query: 'x' });
    expect(search.isError).toBeFalsy();

    const load = await client.callTool({ name: 'load', arguments: { ...args, item_id: 'tool:rye/bash' } });
    expect(JSON.parse(textOf(load))).toEqual({
      status: 'success',
      content: '# hi',
      item_id: 'tool:rye/bash',
    });

    const execute = await client.callTool({ name: 'execute', arguments: { ...args, item_id: 'rye/bash' } });
    const executeText = textOf(execute);
    expect(executeText).toBe(
      JSON.stringify({ status: 'success', type: 'tool', item_id: 'rye/bash', data: { ok: true } }),
    );

    const sign = await client.callTool({ name: 'sign', arguments: { ...args, item_id: 'acme/*' } });
    expect(JSON.parse(textOf(sign))).toEqual({ status: 'signed', item_id: 'acme/*' });

    expect(fake.calls.map((c) => c.tool)).toEqual(['search', 'load', 'execute', 'sign']);
    expect(fake.calls[1]!.args).toEqual({ ...args, item_id: 'tool:rye/bash' });
    for (const call of fake.calls) {
      expect(call.context.signal).toBeInstanceOf(AbortSignal);
      expect(call.context.reportProgress).toBeUndefined();
    }
  });

  it('passes {} when the call has no arguments', async () => {
    await client.callTool({ name: 'sign' });
    expect(fake.calls[0]!.args).toEqual({});
  });

  it('sets isError when the result has status "error"', async () => {
    const result = await client.callTool({
      name: 'execute',
      arguments: { item_id: 'bad', project_path: '/p' },
    });
    expect(result.isError).toBe(true);
    expect(JSON.parse(textOf(result))).toMatchObject({
      status: 'error',
      error: expect.stringContaining('Valid'),
    });
  });

  it('answers an unknown tool with an error result', async () => {
    const result = await client.callTool({ name: 'help', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.parse(textOf(result))).toEqual({
      status: 'error',
      error: 'Unknown tool: help',
      error_type: 'validation',
      hint: 'This server offers search, load, execute, sign.',
    });
    expect(fake.calls).toHaveLength(0);
  });

  it('cuts an oversized error reply but keeps its status, error and error_type', async () => {
    const result = await client.callTool({
      name: 'execute',
      arguments: { item_id: 'huge-error', project_path: '/p' },
    });
    expect(result.isError).toBe(true);
    const body = JSON.parse(textOf(result));
    expect(body).toMatchObject({
      status: 'error',
      error: 'Tool failed',
      error_type: 'execution',
      truncated: true,
    });
    expect(body.partial.length).toBeLessThanOrEqual(MAX_REPLY_CHARS / 2);
  });

  it('turns a thrown exception into an internal error without a stack trace', async () => {
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const result = await client.callTool({
        name: 'execute',
        arguments: { item_id: 'boom', project_path: '/p' },
      });
      expect(result.isError).toBe(true);
      const text = textOf(result);
      expect(JSON.parse(text)).toEqual({ status: 'error', error: 'kaboom', error_type: 'internal' });
      expect(text).not.toMatch(/\bat .*:\d+/);
      expect(stderr).not.toHaveBeenCalled();

      // The entry point's RYE_DEBUG arrives as an option: the adapter never reads the environment.
      const debugServer = createRyeServer(fake.operations, { version: '9.9.9', debug: true });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await debugServer.connect(serverSide);
      const debugClient = new Client({ name: 'test', version: '0.0.0' });
      await debugClient.connect(clientSide);
      await debugClient.callTool({ name: 'execute', arguments: { item_id: 'boom', project_path: '/p' } });
      await debugClient.close();
      expect(String(stderr.mock.calls[0]?.[1])).toContain('kaboom');
    } finally {
      stderr.mockRestore();
    }
  });

  it('treats a non-object result as an internal error', async () => {
    fake.operations.load = async () => undefined as unknown as Record<string, unknown>;
    const result = await client.callTool({ name: 'load', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.parse(textOf(result))).toMatchObject({ status: 'error', error_type: 'internal' });
  });

  it('sends progress notifications when the client asks for progress', async () => {
    const updates: Progress[] = [];
    const result = await client.callTool(
      { name: 'execute', arguments: { item_id: 'progress', project_path: '/p' } },
      undefined,
      { onprogress: (p) => updates.push(p) },
    );
    expect(JSON.parse(textOf(result))).toMatchObject({ progress_reporting: true });
    expect(updates).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('offers no reportProgress without a progress token', async () => {
    const result = await client.callTool({ name: 'execute', arguments: { item_id: 'progress' } });
    expect(JSON.parse(textOf(result))).toMatchObject({ progress_reporting: false });
  });

  it("aborts the operation's signal when the client cancels the request", async () => {
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'execute', arguments: { item_id: 'slow', project_path: '/p' } },
      undefined,
      { signal: controller.signal },
    );
    await fake.slowStarted;
    const call0 = fake.calls[0]!;
    expect(call0.context.signal.aborted).toBe(false);
    controller.abort('user gave up');
    await expect(call).rejects.toThrow();
    const reason = await fake.aborted;
    expect(call0.context.signal.aborted).toBe(true);
    expect(String(reason)).toContain('user gave up');
  });
});
