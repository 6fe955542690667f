/**
 * The MCP client of the standard bundle: rye/core/runtimes/mcp/{stdio,http}, rye/mcp/connect and
 * rye/mcp/discover, against a real MCP server (test/fixtures/mcp-test-server.mjs) over stdio and
 * over Streamable HTTP on 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRye, type Rye } from '../src/index.js';
import type { TempProject } from './helpers.js';
import { rye, tempProject } from './helpers.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'mcp-test-server.mjs');
const NODE = process.execPath;
const TOKEN = 's3cret-token';
const ADD_RESULT = { success: true, content: [{ type: 'text', text: '5' }] };

/** A server config item; JSON strings are valid YAML and keep paths quoted. */
function serverConfig(category: string, fields: Record<string, unknown>): string {
  const lines = Object.entries(fields).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  return `version: "1.0.0"
tool_type: mcp_server
executor_id: null
category: ${category}
description: "Test MCP server"
${lines.join('\n')}
`;
}

function mcpTool(category: string, runtime: 'stdio' | 'http', server: string, toolName: string): string {
  return `version: "1.0.0"
tool_type: mcp
executor_id: rye/core/runtimes/mcp/${runtime}
category: ${category}
description: "Calls ${toolName} on ${server}"
config:
  server: acme/servers/${server}
  server_config_path: "{project_path}/.ai/tools/acme/servers/${server}.yaml"
  tool_name: ${toolName}
input_schema: {type: object}
`;
}

/** Starts the fixture over Streamable HTTP and waits for the URL it prints on stderr. */
function startHttpFixture(): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [FIXTURE, '--http', '--port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, FIXTURE_REQUIRE_TOKEN: TOKEN },
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
      const match = /listening (\S+)/.exec(stderr);
      if (match) resolve({ child, url: match[1]! });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`fixture exited with ${code}: ${stderr}`)));
  });
}

/** A port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function facade(t: TempProject, env: Record<string, string> = {}): Rye {
  return createRye({
    projectPath: t.project,
    userSpace: t.user,
    env: { PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath, ...env },
  });
}

describe('MCP client: runtimes, connect and discover', () => {
  let t: TempProject;
  let r: Rye;
  let http: { child: ChildProcess; url: string };

  beforeAll(async () => {
    t = await tempProject();
    http = await startHttpFixture();
    const outside = join(t.root, 'outside', 'rogue.yaml');
    await mkdir(join(t.root, 'outside'), { recursive: true });
    await writeFile(outside, serverConfig('outside', { transport: 'stdio', command: NODE, args: [FIXTURE] }));
    const files: Record<string, string> = {
      'tools/acme/servers/local.yaml': serverConfig('acme/servers', {
        transport: 'stdio',
        command: NODE,
        args: [FIXTURE],
        env: { FIXTURE_GREETING: '${GREETING:-hello }' },
        timeout: 20,
      }),
      // The header's token comes from the project's .env.
      'tools/acme/servers/remote.yaml': serverConfig('acme/servers', {
        transport: 'http',
        url: http.url,
        headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' },
      }),
      'tools/acme/servers/crashing.yaml': serverConfig('acme/servers', {
        transport: 'stdio',
        command: NODE,
        args: [FIXTURE, '--crash'],
      }),
      'tools/acme/servers/nocommand.yaml': serverConfig('acme/servers', {
        transport: 'stdio',
        command: join(t.root, 'no-such-server'),
      }),
      'tools/acme/servers/unreachable.yaml': serverConfig('acme/servers', {
        transport: 'http',
        url: `http://127.0.0.1:${await closedPort()}/mcp`,
      }),
      'tools/acme/servers/impatient.yaml': serverConfig('acme/servers', {
        transport: 'stdio',
        command: NODE,
        args: [FIXTURE],
        timeout: 1,
      }),
      'tools/acme/servers/tampered.yaml': serverConfig('acme/servers', {
        transport: 'stdio',
        command: NODE,
        args: [FIXTURE],
      }),
      'tools/acme/calc/add.yaml': mcpTool('acme/calc', 'stdio', 'local', 'add'),
      'tools/acme/calc/echo.yaml': mcpTool('acme/calc', 'stdio', 'local', 'echo'),
      'tools/acme/calc/add_http.yaml': mcpTool('acme/calc', 'http', 'remote', 'add'),
      'tools/acme/calc/nope.yaml': mcpTool('acme/calc', 'stdio', 'local', 'nope'),
      'tools/acme/calc/fail.yaml': mcpTool('acme/calc', 'stdio', 'local', 'fail'),
      'tools/acme/calc/crashing.yaml': mcpTool('acme/calc', 'stdio', 'crashing', 'add'),
      'tools/acme/calc/nocommand.yaml': mcpTool('acme/calc', 'stdio', 'nocommand', 'add'),
      'tools/acme/calc/unreachable.yaml': mcpTool('acme/calc', 'http', 'unreachable', 'add'),
      'tools/acme/calc/slow.yaml': mcpTool('acme/calc', 'stdio', 'impatient', 'slow'),
      'tools/acme/calc/tampered.yaml': mcpTool('acme/calc', 'stdio', 'tampered', 'add'),
      'tools/acme/calc/rogue.yaml': mcpTool('acme/calc', 'stdio', 'local', 'add').replace(
        '"{project_path}/.ai/tools/acme/servers/local.yaml"',
        JSON.stringify(outside),
      ),
    };
    for (const [path, text] of Object.entries(files)) await t.write(path, text);
    await writeFile(join(t.project, '.env'), `MCP_TEST_TOKEN=${TOKEN}\n`);
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    const signed = await rye(['sign', 'tool:acme/*', '--project', t.project], { env: t.env });
    expect(signed.json).toMatchObject({ status: 'completed', failed: [], summary: 'Signed 18/18 items' });
    await appendFile(join(t.project, '.ai/tools/acme/servers/tampered.yaml'), 'cwd: /\n');
    r = facade(t);
  }, 60_000);

  afterAll(() => {
    http?.child.kill();
  });

  describe('the runtimes', () => {
    it('a stdio tool item calls the remote tool and returns its content', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/add', parameters: { a: 2, b: 3 } });
      expect(result).toMatchObject({
        status: 'success',
        chain: [
          'acme/calc/add',
          'rye/core/runtimes/mcp/stdio',
          'rye/core/runtimes/node/node',
          'rye/core/primitives/subprocess',
        ],
      });
      expect(result.data).toEqual(ADD_RESULT);
    });

    it('an http tool item calls the server over Streamable HTTP, with ${VAR} headers', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/add_http', parameters: { a: 2, b: 3 } });
      expect(result).toMatchObject({
        status: 'success',
        chain: [
          'acme/calc/add_http',
          'rye/core/runtimes/mcp/http',
          'rye/core/runtimes/node/node',
          'rye/core/primitives/subprocess',
        ],
      });
      expect(result.data).toEqual(ADD_RESULT);
    });

    it('passes only the caller parameters, expands ${VAR} in env and keeps structuredContent', async () => {
      const result = await r.execute({
        item_id: 'tool:acme/calc/echo',
        parameters: { text: 'world', timeout: 30 },
      });
      expect(result).toMatchObject({
        status: 'success',
        data: {
          success: true,
          content: [{ type: 'text', text: 'hello world' }],
          structuredContent: { echoed: 'world', argument_names: ['text'] },
        },
      });
    });

    it('a tool name the server does not offer fails and lists the available tools', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/nope', parameters: {} });
      expect(result).toMatchObject({
        status: 'error',
        error:
          "Tool 'nope' not found on MCP server 'local'. Available tools: add, echo, Shout.Loud, fail, slow",
        data: { success: false, available_tools: ['add', 'echo', 'Shout.Loud', 'fail', 'slow'] },
      });
    });

    it('a server that exits at startup fails with its stderr', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/crashing', parameters: { a: 1, b: 1 } });
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/^MCP server 'crashing' failed to start: the process ended before/);
      expect(result.error).toContain('Server stderr: fixture: missing FIXTURE_API_KEY, refusing to start');
    });

    it('a server command that does not exist fails clearly', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/nocommand', parameters: {} });
      expect(result).toMatchObject({
        status: 'error',
        error: `MCP server 'nocommand' failed to start: command not found: ${join(t.root, 'no-such-server')}`,
      });
    });

    it('an http server nobody listens on fails clearly', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/unreachable', parameters: {} });
      expect(result.status).toBe('error');
      expect(result.error).toMatch(
        /^Cannot reach MCP server 'unreachable' at http:\/\/127\.0\.0\.1:\d+\/mcp: /,
      );
    });

    it("a tool error (isError) is a failed run with the tool's message", async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/fail', parameters: {} });
      expect(result).toMatchObject({
        status: 'error',
        error: "MCP tool 'fail' on server 'local' reported an error: the fixture always fails",
        data: {
          success: false,
          isError: true,
          content: [{ type: 'text', text: 'the fixture always fails' }],
        },
      });
    });

    it("the server config's timeout bounds a call", async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/slow', parameters: { ms: 10_000 } });
      expect(result).toMatchObject({
        status: 'error',
        error:
          "MCP tool 'slow' on server 'impatient' timed out after 1 s (raise timeout in the server config)",
      });
    });

    it('a tampered server config is refused before anything starts', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/tampered', parameters: { a: 1, b: 1 } });
      expect(result.status).toBe('error');
      expect(String(result.error)).toMatch(/tampered|integrity|signature/i);
      expect(result.error).toContain('tampered.yaml');
    });

    it('a server config outside .ai/tools of a space is refused', async () => {
      const result = await r.execute({ item_id: 'tool:acme/calc/rogue', parameters: { a: 1, b: 1 } });
      expect(result.status).toBe('error');
      expect(result.error).toMatch(
        /^Refusing MCP server config .*rogue\.yaml: server configs must lie in \.ai\/tools\//,
      );
    });
  });

  describe('rye/mcp/connect as a tool', () => {
    it('lists the tools of a server named by id', async () => {
      const result = await r.execute({
        item_id: 'tool:rye/mcp/connect',
        parameters: { server_config: 'acme/servers/local', list: true },
      });
      expect(result).toMatchObject({ status: 'success', data: { success: true, server: 'local', count: 5 } });
      const tools = (result.data as { tools: { name: string; inputSchema: unknown }[] }).tools;
      expect(tools.map((tool) => tool.name)).toEqual(['add', 'echo', 'Shout.Loud', 'fail', 'slow']);
      expect(tools[0]).toEqual({
        name: 'add',
        description: 'Add two numbers',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
      });
    });

    it('calls a tool over an inline http connection', async () => {
      const result = await r.execute({
        item_id: 'tool:rye/mcp/connect',
        parameters: {
          connection: { transport: 'http', url: http.url, headers: { Authorization: `Bearer ${TOKEN}` } },
          tool: 'add',
          params: { a: 2, b: 3 },
        },
      });
      expect(result).toMatchObject({ status: 'success' });
      expect(result.data).toEqual(ADD_RESULT);
    });
    it('an http server that rejects the credentials says so; caller connection fields are never ${VAR}-expanded', async () => {
      const result = await r.execute({
        item_id: 'tool:rye/mcp/connect',
        parameters: {
          // A caller naming an environment variable gets the literal text sent, never its value.
          connection: { url: http.url, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } },
          tool: 'add',
        },
      });
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/^MCP server 'server' at http:\S+ answered HTTP 401: /);
      expect(result.error).not.toContain('Unset variables');
    });
  });

  describe('rye/mcp/discover', () => {
    it('writes one signed item per server tool, which then run', async () => {
      const result = await r.execute({
        item_id: 'tool:rye/mcp/discover',
        parameters: { server_id: 'acme/servers/local' },
      });
      const written = ['add', 'echo', 'shout_loud', 'fail', 'slow'].map((name) => `tool:acme/local/${name}`);
      expect(result).toMatchObject({
        status: 'success',
        data: {
          success: true,
          namespace: 'acme/local',
          transport: 'stdio',
          written,
          renamed: [{ tool: 'Shout.Loud', item_id: 'tool:acme/local/shout_loud' }],
          signed: { ok: true, count: 5 },
        },
      });
      const dir = join(t.project, '.ai/tools/acme/local');
      expect((await readdir(dir)).sort()).toEqual(
        ['add.yaml', 'echo.yaml', 'fail.yaml', 'shout_loud.yaml', 'slow.yaml'].sort(),
      );
      const item = await readFile(join(dir, 'shout_loud.yaml'), 'utf8');
      expect(item).toMatch(/^# rye:signed:/);
      expect(item).toContain(
        'tool_type: mcp\nexecutor_id: rye/core/runtimes/mcp/stdio\ncategory: acme/local\n',
      );
      expect(item).toContain(
        'config:\n  server: acme/servers/local\n  server_config_path: "{project_path}/.ai/tools/acme/servers/local.yaml"\n  tool_name: Shout.Loud\n',
      );

      const shout = await r.execute({ item_id: 'tool:acme/local/shout_loud', parameters: { text: 'hey' } });
      expect(shout).toMatchObject({ status: 'success', data: { content: [{ type: 'text', text: 'HEY' }] } });
      const add = await r.execute({ item_id: 'tool:acme/local/add', parameters: { a: 2, b: 3 } });
      expect(add.data).toEqual(ADD_RESULT);
    });

    it('discovers an http server into a chosen namespace in user space', async () => {
      const result = await r.execute({
        item_id: 'tool:rye/mcp/discover',
        parameters: { server_id: 'acme/servers/remote', namespace: 'remote/calc', space: 'user' },
      });
      expect(result).toMatchObject({
        status: 'success',
        data: { success: true, space: 'user', transport: 'http', signed: { ok: true, count: 5 } },
      });
      const item = await readFile(join(t.user, '.ai/tools/remote/calc/add.yaml'), 'utf8');
      expect(item).toContain('executor_id: rye/core/runtimes/mcp/http\n');
      const add = await r.execute({ item_id: 'tool:remote/calc/add', parameters: { a: 2, b: 3 } });
      expect(add).toMatchObject({
        status: 'success',
        chain: [
          'remote/calc/add',
          'rye/core/runtimes/mcp/http',
          'rye/core/runtimes/node/node',
          'rye/core/primitives/subprocess',
        ],
      });
      expect(add.data).toEqual(ADD_RESULT);
    });

    it('without a signing key the items are written unsigned and the result says so', async () => {
      const bare = await tempProject();
      await bare.write(
        'tools/acme/servers/local.yaml',
        serverConfig('acme/servers', { transport: 'stdio', command: NODE, args: [FIXTURE] }),
      );
      // With no key nothing can sign the server config either: refused, unless in dev mode.
      const refused = await facade(bare).execute({
        item_id: 'tool:rye/mcp/discover',
        parameters: { server_id: 'acme/servers/local' },
      });
      expect(refused).toMatchObject({ status: 'error', data: { success: false } });
      expect(refused.error).toMatch(/^Unsigned item: .*local\.yaml/);
      const result = await facade(bare, { RYE_DEV_MODE: '1' }).execute({
        item_id: 'tool:rye/mcp/discover',
        parameters: { server_id: 'acme/servers/local' },
      });
      expect(result).toMatchObject({
        status: 'error',
        data: {
          success: false,
          written: expect.arrayContaining(['tool:acme/local/add']),
          signed: { ok: false },
        },
      });
      expect(result.error).toMatch(/^Wrote 5 MCP tool item\(s\) to .* but could not sign them/);
      expect(result.error).toContain('Generate a signing key pair first');
      const item = await readFile(join(bare.project, '.ai/tools/acme/local/add.yaml'), 'utf8');
      expect(item).toMatch(/^# Generated by rye\/mcp\/discover/);
    });

    it('an unknown server config id fails clearly', async () => {
      const result = await r.execute({
        item_id: 'tool:rye/mcp/discover',
        parameters: { server_id: 'acme/servers/ghost' },
      });
      expect(result).toMatchObject({
        status: 'error',
        error:
          "MCP server config 'acme/servers/ghost' not found: looked for .ai/tools/acme/servers/ghost.yaml in the project, user and system spaces",
      });
    });
  });
});
