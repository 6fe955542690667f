/**
 * A reply's `fix` (what fixes an error, as data) reaches an MCP client as the call of one of the
 * four tools that does it; a fix no tool can carry out stays prose.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { fixCall } from '../src/fix-call.js';
import type { OperationResult, RyeOperations } from '../src/index.js';
import { createRyeServer } from '../src/index.js';

async function replyTo(result: OperationResult): Promise<Record<string, unknown>> {
  const reply = async () => result;
  // A user's own object: the server renders whatever it returns.
  const operations: RyeOperations = { search: reply, load: reply, execute: reply, sign: reply };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createRyeServer(operations, { version: '0.0.0' }).connect(serverSide);
  const client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(clientSide);
  try {
    const answer = await client.callTool({
      name: 'execute',
      arguments: { item_id: 'x', project_path: '/p' },
    });
    return JSON.parse((answer.content as Array<{ text: string }>)[0]!.text);
  } finally {
    await client.close();
  }
}

describe('an MCP reply names the tool call that fixes it', () => {
  it('an unsigned item: call sign with the item and its space', async () => {
    const reply = await replyTo({
      status: 'error',
      error: 'Unsigned item: /p/.ai/tools/demo/plain.py',
      error_type: 'integrity',
      hint: 'Sign tool:demo/plain in user space.',
      fix: { action: 'sign', refs: ['tool:demo/plain'], space: 'user' },
    });
    expect(reply.hint).toBe(
      'Sign tool:demo/plain in user space. Call sign with {"item_id":"tool:demo/plain","source":"user"} (and project_path).',
    );
    expect(reply.fix).toEqual({ action: 'sign', refs: ['tool:demo/plain'], space: 'user' });
    expect(reply.hint).not.toMatch(/\brye sign\b/);
  });

  it('a system item: load it with destination, then sign the copy', () => {
    expect(fixCall({ action: 'copy_to_space', ref: 'tool:rye/bash', to: 'project' })).toBe(
      'Call load with {"item_id":"tool:rye/bash","source":"system","destination":"project"}, then sign with {"item_id":"tool:rye/bash","source":"project"} (and project_path).',
    );
  });

  it('a fix no MCP tool does (a key to generate) leaves the hint as it is', async () => {
    const reply = await replyTo({
      status: 'error',
      error: 'No signing keypair found',
      error_type: 'config',
      hint: 'Generate a signing key pair first.',
      fix: { action: 'generate_key', force: false },
    });
    expect(reply.hint).toBe('Generate a signing key pair first.');
  });

  it('each failed item of a batch sign gets its own call', async () => {
    const reply = await replyTo({
      status: 'error',
      error: 'nothing signed',
      failed: [
        {
          item: 'tool:a/b',
          hint: 'It exists in user space.',
          fix: { action: 'sign', refs: ['tool:a/b'], space: 'user' },
        },
      ],
    });
    expect((reply.failed as Array<{ hint: string }>)[0]!.hint).toBe(
      'It exists in user space. Call sign with {"item_id":"tool:a/b","source":"user"} (and project_path).',
    );
  });
});
