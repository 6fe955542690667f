/**
 * The facade's MCP server: an error's fix reaches the client as the call of the `sign` tool,
 * and the API (createRye) returns the fix as data beside a hint that names no command.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createRyeServer } from '@ryeos/mcp';
import { describe, expect, it } from 'vitest';
import { createRye } from '../src/index.js';
import { createOperations } from '../src/operations.js';
import { rye, useTempProjects } from './helpers.js';

const PLAIN =
  '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\nprint("{}")\n';

describe('an unsigned tool over MCP and the API', () => {
  const tempProject = useTempProjects();

  it('MCP names the sign call; the API returns the fix as data and no rye command', async () => {
    const t = await tempProject();
    await rye(['keys', 'generate'], { env: t.env });
    await t.write('tools/demo/plain.py', PLAIN);
    const operations = createOperations({ env: { USER_SPACE: t.user, PATH: process.env.PATH } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createRyeServer(operations, { version: '0.0.0' }).connect(serverSide);
    const client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(clientSide);
    try {
      const answer = await client.callTool({
        name: 'execute',
        arguments: { item_id: 'tool:demo/plain', project_path: t.project },
      });
      const reply = JSON.parse((answer.content as Array<{ text: string }>)[0]!.text);
      expect(reply).toMatchObject({
        error_type: 'integrity',
        fix: { action: 'sign', refs: ['tool:demo/plain'], space: 'project' },
      });
      expect(reply.hint).toBe(
        'Sign tool:demo/plain in project space. Call sign with {"item_id":"tool:demo/plain","source":"project"} (and project_path).',
      );
    } finally {
      await client.close();
      await operations.close();
    }

    const api = createRye({ projectPath: t.project, env: { USER_SPACE: t.user, PATH: process.env.PATH } });
    const result = await api.execute({ item_id: 'tool:demo/plain' });
    expect(result).toMatchObject({
      hint: 'Sign tool:demo/plain in project space.',
      fix: { action: 'sign', refs: ['tool:demo/plain'], space: 'project' },
    });
    expect(JSON.stringify(result)).not.toMatch(/\brye (sign|keys|load)\b/);
  });
});
