/**
 * What an MCP client sees of the four tools, through the SDK client over stdio against a real
 * `ryeos-mcp` process: each tool's title, annotations and `outputSchema`; every reply as
 * `structuredContent` that validates against it (and the same JSON as text, for older clients);
 * and, while a forked directive runs, progress messages naming its turn and its tool calls.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ReplayServer } from '@ryeos/threads/testing';
import { startReplayServer } from '@ryeos/threads/testing';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { MCP_SERVER, rye, tempProject } from './helpers.js';
import { directive, LOOK_SCRIPT } from './threads-helpers.js';

describe('MCP results, annotations and fork progress', () => {
  let t: TempProject;
  let server: ReplayServer;
  let client: Client;
  let tools: Awaited<ReturnType<Client['listTools']>>['tools'];
  const ajv = new Ajv({ strict: false, allErrors: true });

  beforeAll(async () => {
    t = await tempProject();
    await t.write(
      'directives/acme/look.md',
      directive('look', {
        metadata: '    <limits turns="4" spend="0.5"/>\n    <permissions><search>*</search></permissions>',
        body: 'Search for notes, then say what you found.',
      }),
    );
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    expect((await rye(['sign', 'directive:acme/look', '--project', t.project], { env: t.env })).code).toBe(0);
    server = await startReplayServer(LOOK_SCRIPT);
    client = new Client({ name: 'structured', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MCP_SERVER],
        env: {
          PATH: process.env.PATH ?? '',
          USER_SPACE: t.user,
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: 'test-key',
        },
        stderr: 'ignore',
      }),
    );
    ({ tools } = await client.listTools());
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  const toolNamed = (name: string) => tools.find((tool) => tool.name === name)!;

  /** Calls a tool; checks its structured reply against the tool's schema and its text twin. */
  async function call(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (p: { message?: string }) => void,
  ) {
    const result = await client.callTool(
      { name, arguments: { project_path: t.project, ...args } },
      undefined,
      {
        timeout: 60_000,
        ...(onprogress ? { onprogress } : {}),
      },
    );
    const validate = ajv.compile(toolNamed(name).outputSchema as object);
    expect(result.structuredContent, `${name} sent no structuredContent`).toBeTypeOf('object');
    expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    return result.structuredContent as Record<string, unknown>;
  }

  it('lists titles, annotations and an object outputSchema per tool', () => {
    expect(tools.map((tool) => tool.name)).toEqual(['search', 'load', 'execute', 'sign']);
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.outputSchema?.type).toBe('object');
    }
    expect(toolNamed('search').annotations).toMatchObject({ readOnlyHint: true });
    expect(toolNamed('load').annotations).toMatchObject({ readOnlyHint: true });
    expect(toolNamed('execute').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(toolNamed('sign').annotations).toMatchObject({ destructiveHint: false, idempotentHint: true });
  });

  it('answers search, load, sign and execute as structuredContent that fits each schema', async () => {
    const found = await call('search', { scope: 'directive', query: 'look' });
    expect(found.status).toBe('success');
    expect((found.results as Array<{ ref: string }>).map((r) => r.ref)).toContain('directive:acme/look');
    expect(await call('load', { item_id: 'directive:acme/look' })).toMatchObject({
      status: 'success',
      item_id: 'directive:acme/look',
    });
    expect((await call('sign', { item_id: 'directive:acme/look' })).status).toBe('signed');
    const dry = await call('execute', {
      item_id: 'tool:rye/file-system/read',
      parameters: { path: 'notes.txt' },
      dry_run: true,
    });
    expect(dry.status, JSON.stringify(dry)).toBe('validation_passed');
    // A failure is structured too (isError), and fits the same schema.
    const missing = await call('load', { item_id: 'directive:acme/nothing-here' });
    expect(missing).toMatchObject({ status: 'error', error_type: 'not_found' });
  });

  it('reports a running fork’s turn and tool calls as progress, and its result fits the schema', async () => {
    const messages: string[] = [];
    const reply = await call('execute', { item_id: 'directive:acme/look', thread: 'fork' }, (p) => {
      if (p.message) messages.push(p.message);
    });
    expect(reply).toMatchObject({ status: 'success', result: 'Found one note.' });
    expect(messages).toContain('turn 1: tool started rye_search');
    expect(messages).toContain('turn 1: tool finished rye_search');
    expect(messages).toContain('turn 2');
  }, 60_000);
});
