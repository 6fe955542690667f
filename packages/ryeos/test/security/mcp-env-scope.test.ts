/**
 * Attack 6 for MCP server configs (DECISIONS 30): `${VAR}` in a user or system server config
 * never comes from the project's files, and connection fields a caller passes are never expanded.
 * Exercised on the bundle's own client module (rye/mcp/connect).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const CONNECT = join(import.meta.dirname, '..', '..', '.ai', 'tools', 'rye', 'mcp', 'connect.js');

interface ConnectModule {
  templateVariables(
    ctx: { projectPath: string; userSpace: string },
    scope?: string,
  ): Record<string, string> | null;
  configScope(path: string, ctx: { projectPath: string; userSpace: string }): string;
  normalizeConnection(
    fields: Record<string, unknown>,
    ctx: { projectPath: string; userSpace: string },
    scope?: string,
  ): { url?: string; headers?: Record<string, string> };
}

let root: string;
let ctx: { projectPath: string; userSpace: string };
const saved = { ...process.env };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rye-mcp-scope-'));
  ctx = { projectPath: join(root, 'project'), userSpace: join(root, 'user') };
  await mkdir(join(ctx.projectPath, '.ai', 'tools', 'acme'), { recursive: true });
  await mkdir(join(ctx.userSpace, '.ai', 'tools', 'acme'), { recursive: true });
  await writeFile(join(ctx.projectPath, '.env'), 'API_BASE=http://evil.invalid\nSHARED=from-project\n');
  await writeFile(join(ctx.projectPath, '.ai', '.env'), 'API_TOKEN=attacker\n');
  await writeFile(join(ctx.userSpace, '.ai', '.env'), 'API_TOKEN=user-token\n');
});

afterEach(async () => {
  process.env = { ...saved };
  await rm(root, { recursive: true, force: true });
});

describe('MCP server config variables', () => {
  it('a user or system config never sees the project files, even through a project run’s env', async () => {
    const connect = (await import(CONNECT)) as ConnectModule;
    // A project tool's run carries the project's .env in its process env: still not for this config.
    process.env.API_BASE = 'http://evil.invalid';
    process.env.HOST_ONLY = 'host';
    const userConfig = join(ctx.userSpace, '.ai', 'tools', 'acme', 'server.yaml');
    await writeFile(userConfig, 'x: 1\n');
    expect(connect.configScope(userConfig, ctx)).toBe('trusted');
    const conn = connect.normalizeConnection(
      {
        transport: 'http',
        url: 'http://good.invalid/${API_BASE}',
        headers: { Authorization: 'Bearer ${API_TOKEN}' },
      },
      ctx,
      'trusted',
    );
    expect(conn.url).toBe('http://good.invalid/');
    expect(conn.headers?.Authorization).toBe('Bearer user-token');
    const vars = connect.templateVariables(ctx, 'trusted')!;
    expect(vars.HOST_ONLY).toBe('host');
    expect(vars.SHARED).toBeUndefined();
  });

  it("a project config's url does not come from the project files when its headers send a value of yours", async () => {
    const connect = (await import(CONNECT)) as ConnectModule;
    process.env.HOST_TOKEN = 'host-token';
    const fields = (header: string) => ({
      transport: 'http',
      url: '${API_BASE:-http://good.invalid}/mcp',
      headers: { Authorization: `Bearer \${${header}}` },
    });
    // Your token (process env, or your user .ai/.env overridden by nothing but the project's own)
    // goes to the url as signed files and your environment give it.
    expect(connect.normalizeConnection(fields('HOST_TOKEN'), ctx, 'project').url).toBe(
      'http://good.invalid/mcp',
    );
    // The project's own token may go where the project's files say.
    await writeFile(join(ctx.projectPath, '.env'), 'API_BASE=http://project.invalid\nPROJECT_TOKEN=p\n');
    expect(connect.normalizeConnection(fields('PROJECT_TOKEN'), ctx, 'project').url).toBe(
      'http://project.invalid/mcp',
    );
  });

  it('a project config that sends a value of yours in its url, or to a stdio command, expands without the project files', async () => {
    const connect = (await import(CONNECT)) as ConnectModule;
    process.env.HOST_TOKEN = 'host-token';
    await writeFile(
      join(ctx.projectPath, '.env'),
      'API_BASE=http://evil.invalid\nMCP_BIN=/tmp/evil-bin\nMCP_ARG=--evil\n',
    );
    const url = (template: string) =>
      connect.normalizeConnection({ transport: 'http', url: template }, ctx, 'project').url;
    expect(url('${API_BASE:-http://good.invalid}/mcp?key=${HOST_TOKEN}')).toBe(
      'http://good.invalid/mcp?key=host-token',
    );
    expect(url('${API_BASE:-http://good.invalid}/mcp/${HOST_TOKEN}')).toBe(
      'http://good.invalid/mcp/host-token',
    );
    const stdio = connect.normalizeConnection(
      {
        transport: 'stdio',
        command: '${MCP_BIN:-npx}',
        args: ['acme-mcp', '${MCP_ARG:-}'],
        env: { ACME_TOKEN: '${HOST_TOKEN}' },
      },
      ctx,
      'project',
    ) as { command?: string; args?: string[]; env?: Record<string, string> };
    expect(stdio).toMatchObject({
      command: 'npx',
      args: ['acme-mcp', ''],
      env: { ACME_TOKEN: 'host-token' },
    });
    // Without a value of yours, the project's files still fill the project's own config.
    const own = connect.normalizeConnection(
      { transport: 'stdio', command: '${MCP_BIN:-npx}', args: ['acme-mcp'] },
      ctx,
      'project',
    ) as { command?: string };
    expect(own.command).toBe('/tmp/evil-bin');
  });

  it('a project config may use the project files', async () => {
    const connect = (await import(CONNECT)) as ConnectModule;
    const projectConfig = join(ctx.projectPath, '.ai', 'tools', 'acme', 'server.yaml');
    await writeFile(projectConfig, 'x: 1\n');
    expect(connect.configScope(projectConfig, ctx)).toBe('project');
    expect(connect.templateVariables(ctx, 'project')).toMatchObject({
      API_BASE: 'http://evil.invalid',
      API_TOKEN: 'attacker',
    });
  });

  it('connection fields from a caller are data: ${VAR} is sent as written', async () => {
    const connect = (await import(CONNECT)) as ConnectModule;
    process.env.SECRET = 's3cr3t';
    const conn = connect.normalizeConnection(
      { transport: 'http', url: 'http://127.0.0.1:9/?k=${SECRET}', headers: { X: '${SECRET}' } },
      ctx,
    );
    expect(conn.url).toBe('http://127.0.0.1:9/?k=${SECRET}');
    expect(conn.headers?.X).toBe('${SECRET}');
  });
});
