import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRyeServer, type OperationResult, type RyeOperations } from '../src/index.js';

/** A server whose `execute` answers `answer`, and an SDK client that validates structuredContent. */
async function connect(answer: OperationResult): Promise<Client> {
  const unused = async (): Promise<OperationResult> => ({ status: 'error', error: 'unused' });
  const operations: RyeOperations = {
    search: unused,
    load: unused,
    sign: unused,
    execute: async () => answer,
  };
  const server = createRyeServer(operations, { version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(clientSide);
  // As a real client does: after listing, the SDK checks each reply against the tool's outputSchema.
  await client.listTools();
  return client;
}

describe('structuredContent always matches the outputSchema', () => {
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    vi.restoreAllMocks();
  });

  it('leaves out a field that does not match (a fractional token count), keeps the rest, and says why', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const answer = {
      status: 'completed',
      thread_id: 't-1',
      result: 'done',
      cost: { turns: 1, input_tokens: 10, output_tokens: 0.5, spend: 0.01 },
    };
    client = await connect(answer);
    const reply = await client.callTool({ name: 'execute', arguments: { project_path: '/p', item_id: 'x' } });
    expect(reply.isError).toBeUndefined();
    expect(reply.structuredContent).toEqual({ status: 'completed', thread_id: 't-1', result: 'done' });
    // The text content still carries the whole reply.
    const content = reply.content as Array<{ type: string; text: string }>;
    expect(JSON.parse(content[0]!.text)).toEqual(answer);
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/execute reply .*output_tokens.*integer.*cost/));
    expect(log.mock.calls.join('\n')).not.toContain('0.5');
  });

  it('sends a matching reply whole and logs nothing', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const answer = { status: 'completed', cost: { turns: 1, input_tokens: 10, output_tokens: 1, spend: 0 } };
    client = await connect(answer);
    const reply = await client.callTool({ name: 'execute', arguments: { project_path: '/p', item_id: 'x' } });
    expect(reply.structuredContent).toEqual(answer);
    expect(log).not.toHaveBeenCalled();
  });

  it('leaves out an error reply field that does not match, and the reply stays an error', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    client = await connect({ status: 'error', error: 'failed', error_type: 7 as unknown as string });
    const reply = await client.callTool({ name: 'execute', arguments: { project_path: '/p', item_id: 'x' } });
    expect(reply.isError).toBe(true);
    expect(reply.structuredContent).toEqual({ status: 'error', error: 'failed' });
  });
});
