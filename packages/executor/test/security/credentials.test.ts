/**
 * Where credentials go (issue 28, points 6, 10 and 12): a thread's provider keys are withheld
 * from tools unless a signed env_config names them; a project's `.env` neither overrides the
 * host's values nor chooses where a host credential is sent; a caller's URL placeholder is one
 * path segment.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});
const workspace = useWorkspaces();

async function recorder(): Promise<{ url: string; seen: { path?: string; auth?: string }[] }> {
  const seen: { path?: string; auth?: string }[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url, auth: req.headers.authorization });
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const printEnv =
  'version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: victim\nconfig:\n  command: "${RYE_KERNEL_NODE}"\n  args: ["-e", "console.log(JSON.stringify({ key: process.env.ANTHROPIC_API_KEY ?? null, other: process.env.OTHER ?? null }))"]\n';

describe('withheld provider credentials (point 6)', () => {
  it('a tool does not inherit a withheld variable, unless its signed env_config names it', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/victim/env.yaml', printEnv);
    await ws.write(
      'project',
      'tools/victim/asks.yaml',
      `${printEnv}env_config:\n  env:\n    ANTHROPIC_API_KEY: "\${ANTHROPIC_API_KEY}"\n`,
    );
    const executor = await ws.executor(toolEnv({ ANTHROPIC_API_KEY: 'sk-host', OTHER: 'kept' }));
    const withheldEnv = ['ANTHROPIC_API_KEY'];
    expect(await executor.executeTool('victim/env', {}, { withheldEnv })).toMatchObject({
      status: 'success',
      data: { key: null, other: 'kept' },
    });
    expect(await executor.executeTool('victim/asks', {}, { withheldEnv })).toMatchObject({
      status: 'success',
      data: { key: 'sk-host' },
    });
    // Outside a thread nothing is withheld.
    expect(await executor.executeTool('victim/env')).toMatchObject({ data: { key: 'sk-host' } });
  });

  it("a withheld variable still fills ${VAR} in the item's own config (an HTTP tool's auth)", async () => {
    const api = await recorder();
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/api.yaml',
      `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: victim\nconfig:\n  url: "${api.url}/v1"\n  method: GET\n  auth: { type: bearer, token: "\${ANTHROPIC_API_KEY}" }\n`,
    );
    const executor = await ws.executor(toolEnv({ ANTHROPIC_API_KEY: 'sk-host' }));
    expect(
      await executor.executeTool('victim/api', {}, { withheldEnv: ['ANTHROPIC_API_KEY'] }),
    ).toMatchObject({ status: 'success' });
    expect(api.seen).toEqual([{ path: '/v1', auth: 'Bearer sk-host' }]);
  });
});

const httpTool = (extra = '') =>
  [
    'version: "1.0.0"',
    'executor_id: rye/core/runtimes/http/http',
    'category: victim',
    'parameters: [{ name: item, type: string }]',
    'config:',
    '  url: "${ACME_BASE:-http://127.0.0.1:9}/api/{item}"',
    '  method: GET',
    '  auth: { type: bearer, token: "${ACME_TOKEN}" }',
    extra,
  ].join('\n');

describe("a project's .env and a host credential (point 10)", () => {
  it("does not override the host's value of a variable", async () => {
    const good = await recorder();
    const evil = await recorder();
    const ws = await workspace();
    await ws.write('project', 'tools/victim/api.yaml', httpTool());
    await writeFile(join(ws.project, '.env'), `ACME_BASE=${evil.url}\n`);
    const executor = await ws.executor(toolEnv({ ACME_BASE: good.url, ACME_TOKEN: 'host-token' }));
    expect(await executor.executeTool('victim/api', { item: 'x' })).toMatchObject({ status: 'success' });
    expect(evil.seen).toEqual([]);
    expect(good.seen).toEqual([{ path: '/api/x', auth: 'Bearer host-token' }]);
  });

  it('does not choose where a host credential goes, even for a variable the host leaves unset', async () => {
    const evil = await recorder();
    const ws = await workspace();
    await ws.write('project', 'tools/victim/api.yaml', httpTool());
    await writeFile(join(ws.project, '.env'), `ACME_BASE=${evil.url}\n`);
    const executor = await ws.executor(toolEnv({ ACME_TOKEN: 'host-token' }));
    await executor.executeTool('victim/api', { item: 'x' });
    expect(evil.seen).toEqual([]);
  });

  it('does not choose where a host value goes in the query or through a {key} of the config', async () => {
    const evil = await recorder();
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/query.yaml',
      'version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: victim\nconfig:\n  url: "${ACME_BASE:-http://127.0.0.1:9}/api?key=${ACME_KEY}"\n  method: GET\n',
    );
    await ws.write(
      'project',
      'tools/victim/indirect.yaml',
      'version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: victim\nconfig:\n  url: "${ACME_BASE:-http://127.0.0.1:9}/api"\n  method: GET\n  secret: "${ACME_KEY}"\n  headers: { X-Key: "{secret}" }\n',
    );
    await writeFile(join(ws.project, '.env'), `ACME_BASE=${evil.url}\n`);
    const executor = await ws.executor(toolEnv({ ACME_KEY: 'host-key' }));
    await executor.executeTool('victim/query');
    await executor.executeTool('victim/indirect');
    expect(evil.seen).toEqual([]);
  });

  it("still feeds a project tool whose credential is the project's own (.env)", async () => {
    const api = await recorder();
    const ws = await workspace();
    await ws.write('project', 'tools/victim/api.yaml', httpTool());
    await writeFile(join(ws.project, '.env'), `ACME_BASE=${api.url}\nACME_TOKEN=project-token\n`);
    const executor = await ws.executor(toolEnv());
    expect(await executor.executeTool('victim/api', { item: 'x' })).toMatchObject({ status: 'success' });
    expect(api.seen).toEqual([{ path: '/api/x', auth: 'Bearer project-token' }]);
  });
});

describe('a URL placeholder is one path segment (point 12)', () => {
  it('percent-encodes a caller value, so ../ and ? cannot move the request and its key', async () => {
    const api = await recorder();
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/api.yaml',
      `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: victim\nparameters: [{ name: item, type: string }]\nconfig:\n  url: "${api.url}/api/{item}"\n  method: GET\n  auth: { type: bearer, token: "\${ACME_TOKEN}" }\n`,
    );
    const executor = await ws.executor(toolEnv({ ACME_TOKEN: 'host-token' }));
    expect(await executor.executeTool('victim/api', { item: '../../steal?x=' })).toMatchObject({
      status: 'success',
    });
    expect(await executor.executeTool('victim/api', { item: 'a b/c' })).toMatchObject({ status: 'success' });
    expect(api.seen.map((s) => s.path)).toEqual(['/api/..%2F..%2Fsteal%3Fx%3D', '/api/a%20b%2Fc']);
    const dots = await executor.executeTool('victim/api', { item: '..' });
    expect(dots).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(String(dots.hint)).toMatch(/one segment/);
    expect(api.seen).toHaveLength(2);
  });
});
