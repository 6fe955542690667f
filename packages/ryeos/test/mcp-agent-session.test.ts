/**
 * An agent's first session over MCP (SDK Client, stdio): search for a tool, load it, copy it to
 * project space, edit and re-sign it, run it, use the file-system and shell tools, and follow an
 * inline directive's directions.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { connectMcpStdio, rye, tempProject } from './helpers.js';

describe('an agent session over MCP', () => {
  let t: TempProject;
  let client: Client;
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: { project_path: t.project, ...args } })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    return {
      isError: result.isError === true,
      body: JSON.parse(result.content[0]!.text) as Record<string, unknown>,
    };
  };

  beforeAll(async () => {
    t = await tempProject();
    expect((await rye(['init', '--project', t.project], { env: t.env })).code).toBe(0);
    client = await connectMcpStdio('agent', t.user);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  it('customises a system tool: search → load → copy → edit → sign → run', async () => {
    const found = await call('search', { scope: 'tool.rye.core.*', query: 'keys trust' });
    const hit = (found.body.results as { id: string; source: string }[])[0]!;
    expect(hit).toMatchObject({ id: 'rye/core/keys/keys', source: 'system' });

    const loaded = await call('load', { item_id: `tool:${hit.id}` });
    expect(loaded.body.content).toContain('export const __tool_description__');

    const copied = await call('load', { item_id: `tool:${hit.id}`, destination: 'project' });
    expect(copied.body).toMatchObject({ copied_to: 'project' });
    // Unsigned in its new space (the bundle key vouches only for system items), the copy is refused.
    expect(
      (await call('execute', { item_id: `tool:${hit.id}`, parameters: { action: 'list' } })).isError,
    ).toBe(true);

    const edited = await call('execute', {
      item_id: 'tool:rye/file-system/edit',
      parameters: {
        path: `.ai/tools/${hit.id}.js`,
        old_string: 'export const __tool_description__ = "',
        new_string: 'export const __tool_description__ = "(project copy) ',
      },
    });
    expect(edited.body).toMatchObject({ status: 'success' });
    const signed = await call('sign', { item_id: `tool:${hit.id}` });
    expect(signed.body).toMatchObject({ status: 'signed', item_id: `tool:${hit.id}`, warnings: [] });

    const ran = await call('execute', { item_id: `tool:${hit.id}`, parameters: { action: 'list' } });
    expect(ran.isError).toBe(false);
    expect(ran.body).toMatchObject({ status: 'success', data: { success: true } });
    const shadow = await call('search', { scope: 'tool.rye.core.keys', query: '*' });
    expect((shadow.body.results as { source: string; shadows?: unknown[] }[])[0]).toMatchObject({
      source: 'project',
      shadows: [{ space: 'system' }],
    });
  });

  it('uses the file-system and shell tools', async () => {
    const write = await call('execute', {
      item_id: 'tool:rye/file-system/write',
      parameters: { path: 'src/app.txt', content: 'alpha\nbeta\n' },
    });
    expect(write.isError).toBe(false);
    const grep = await call('execute', {
      item_id: 'tool:rye/file-system/grep',
      parameters: { pattern: 'bet' },
    });
    expect(JSON.stringify(grep.body.data)).toContain('app.txt');
    const shell = await call('execute', {
      item_id: 'tool:rye/bash',
      parameters: { command: 'wc -l < src/app.txt' },
    });
    expect(shell.body).toMatchObject({ status: 'success', data: { exit_code: 0 } });
    expect(String((shell.body.data as { stdout: string }).stdout).trim()).toBe('2');
  });

  it('follows an inline directive’s directions', async () => {
    const directive = await call('execute', {
      item_id: 'directive:example/greet',
      parameters: { name: 'Ada' },
    });
    const directions = String(directive.body.your_directions);
    expect(directions).toContain('Execute tool:example/hello with parameters {"name": "Ada"}');
    // Do what it says: run the tool it names, with the parameters it gives.
    const [, ref, params] = /Execute (tool:\S+) with parameters (\{.*?\})\./.exec(directions)!;
    const result = await call('execute', { item_id: ref, parameters: JSON.parse(params!) });
    expect(result.body).toMatchObject({ status: 'success', data: { greeting: 'Hello, Ada!' } });
  });
});
