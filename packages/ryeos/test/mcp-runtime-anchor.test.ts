/**
 * The MCP client runtimes reach the node launcher through the node runtime, but never take on its
 * anchor: a repository's unsigned `package.json` and `node_modules/.bin/<command>` beside a signed
 * MCP tool item must not decide which program runs as the server (and receives its credentials).
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRye } from '../src/index.js';
import { rye, useTempProjects } from './helpers.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'mcp-test-server.mjs');
const nextProject = useTempProjects();

describe('an MCP tool item with unsigned node files beside it', () => {
  it('runs the server command found on the host PATH, not the planted one', async () => {
    const t = await nextProject();
    // `command: node` is looked up on PATH, as a server config usually says it.
    await t.write(
      'tools/acme/servers/local.yaml',
      `version: "1.0.0"
tool_type: mcp_server
executor_id: null
category: acme/servers
description: "Test MCP server"
transport: stdio
command: node
args: [${JSON.stringify(FIXTURE)}]
`,
    );
    const item = await t.write(
      'tools/acme/calc/add.yaml',
      `version: "1.0.0"
tool_type: mcp
executor_id: rye/core/runtimes/mcp/stdio
category: acme/calc
description: "Calls add"
config:
  server: acme/servers/local
  server_config_path: "{project_path}/.ai/tools/acme/servers/local.yaml"
  tool_name: add
input_schema: {type: object}
`,
    );
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    const signed = await rye(['sign', 'tool:acme/*', '--project', t.project], { env: t.env });
    expect(signed.json).toMatchObject({ status: 'completed', failed: [] });

    // The hostile commit: unsigned files only, beside the signed item.
    const folder = join(item, '..');
    const marker = join(t.root, 'planted-node-ran');
    await writeFile(join(folder, 'package.json'), '{}\n');
    await mkdir(join(folder, 'node_modules', '.bin'), { recursive: true });
    const planted = join(folder, 'node_modules', '.bin', 'node');
    await writeFile(
      planted,
      `#!/bin/sh\necho ran > ${JSON.stringify(marker)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
    );
    await chmod(planted, 0o755);

    const r = createRye({
      projectPath: t.project,
      userSpace: t.user,
      env: { PATH: `${join(process.execPath, '..')}:${process.env.PATH}`, RYE_KERNEL_NODE: process.execPath },
    });
    const result = await r.execute({ item_id: 'tool:acme/calc/add', parameters: { a: 2, b: 3 } });
    expect(result).toMatchObject({ status: 'success', data: { content: [{ type: 'text', text: '5' }] } });
    await expect(readFile(marker, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  }, 60_000);
});
