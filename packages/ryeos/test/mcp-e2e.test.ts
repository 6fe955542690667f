/**
 * The built `ryeos-mcp` driven by the MCP SDK's own Client, over stdio and Streamable HTTP:
 * the four tools, a signed tool, an inline directive, knowledge, search, load/copy, and
 * isError on an unsigned item.
 */

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { connectMcpStdio, MCP_SERVER, rye, tempProject } from './helpers.js';

async function seed(t: TempProject): Promise<void> {
  await t.write(
    'tools/acme/hello.js',
    'export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "acme";\nexport const __tool_description__ = "Say hello to someone";\nlet r = "";\nfor await (const c of process.stdin) r += c;\nconsole.log(JSON.stringify({ success: true, hello: JSON.parse(r).name }));\n',
  );
  await t.write(
    'directives/acme/welcome.md',
    '```xml\n<directive name="welcome" version="1.0.0">\n  <metadata><description>Welcome a new user</description><category>acme</category><author>acme</author></metadata>\n  <inputs><input name="who" required="true">Who</input></inputs>\n</directive>\n```\n\nWelcome {input:who} warmly.\n',
  );
  await t.write(
    'knowledge/acme/tone.md',
    '```yaml\nname: tone\ntitle: Tone of voice\nentry_type: reference\nversion: "1.0.0"\ncategory: acme\n```\n\nBe kind.\n',
  );
  expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
  for (const ref of ['tool:acme/*', 'directive:acme/*', 'knowledge:acme/*']) {
    expect((await rye(['sign', ref, '--project', t.project], { env: t.env })).code).toBe(0);
  }
  const unsigned = join(t.project, '.ai', 'tools', 'acme', 'raw.js');
  await mkdir(dirname(unsigned), { recursive: true });
  await writeFile(
    unsigned,
    'export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "acme";\n',
  );
}

type CallResult = { isError?: boolean; content: { type: string; text: string }[] };
const payload = (result: unknown) =>
  JSON.parse((result as CallResult).content[0]!.text) as Record<string, unknown>;

function agentSession(getClient: () => Client, getProject: () => TempProject) {
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await getClient().callTool({
      name,
      arguments: { project_path: getProject().project, ...args },
    })) as CallResult;
    return { isError: result.isError === true, body: payload(result) };
  };

  it('lists exactly the four tools', async () => {
    const { tools } = await getClient().listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['execute', 'load', 'search', 'sign']);
  });

  it('runs a signed tool', async () => {
    const { isError, body } = await call('execute', {
      item_id: 'tool:acme/hello',
      parameters: { name: 'Ada' },
    });
    expect(isError).toBe(false);
    expect(body).toMatchObject({ status: 'success', data: { hello: 'Ada' } });
  });

  it('returns an inline directive’s directions', async () => {
    const { body } = await call('execute', { item_id: 'directive:acme/welcome', parameters: { who: 'Ada' } });
    expect(body).toMatchObject({ your_directions: 'Welcome Ada warmly.' });
  });

  it('returns knowledge', async () => {
    const { body } = await call('execute', { item_id: 'knowledge:acme/tone' });
    expect(body).toMatchObject({ status: 'success', data: { body: 'Be kind.' } });
  });

  it('searches', async () => {
    const { isError, body } = await call('search', { scope: 'tool', query: 'hello' });
    expect(isError).toBe(false);
    expect((body.results as { id: string }[]).map((r) => r.id)).toContain('acme/hello');
  });

  it('loads and copies a system item into the project', async () => {
    const { body } = await call('load', {
      item_id: 'tool:rye/core/runtimes/bash/bash',
      destination: 'project',
    });
    expect(body).toMatchObject({ status: 'success', source: 'system', copied_to: 'project' });
    expect(body.hint).toMatch(/sign the copy before it runs/);
  });

  it('gives isError on an unsigned item', async () => {
    const { isError, body } = await call('execute', { item_id: 'tool:acme/raw' });
    expect(isError).toBe(true);
    expect(body).toMatchObject({ status: 'error', error_type: 'integrity' });
  });
}

describe('ryeos-mcp over stdio', () => {
  let t: TempProject;
  let client: Client;
  beforeAll(async () => {
    t = await tempProject();
    await seed(t);
    client = await connectMcpStdio('e2e', t.user);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });
  agentSession(
    () => client,
    () => t,
  );
});

describe('ryeos-mcp over Streamable HTTP', () => {
  let t: TempProject;
  let client: Client;
  let server: ChildProcess;
  beforeAll(async () => {
    t = await tempProject();
    await seed(t);
    server = spawn(process.execPath, [MCP_SERVER, '--http', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', USER_SPACE: t.user },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { url, token } = await new Promise<{ url: string; token: string }>((resolve, reject) => {
      let err = '';
      server.stderr?.on('data', (chunk) => {
        err += chunk;
        const url = /Streamable HTTP on (\S+)/.exec(err)?.[1];
        const token = /Authorization: Bearer (\S+?)"/.exec(err)?.[1];
        if (url && token) resolve({ url, token });
      });
      server.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    client = new Client({ name: 'e2e-http', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    server?.kill('SIGTERM');
  });
  agentSession(
    () => client,
    () => t,
  );
});
