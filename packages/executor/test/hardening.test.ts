/** Attacks the review found, each now refused or made harmless. */
import { appendFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWorkspace } from './helpers/workspace.js';

const NODE_TOOL = (category: string, body: string) =>
  `export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "${category}";\n${body}\n`;

describe('hardening', () => {
  it('a project .env cannot inject NODE_OPTIONS into any tool; ordinary variables reach project tools only', async () => {
    const ws = await createWorkspace();
    const marker = join(ws.root, 'injected');
    await writeFile(
      join(ws.root, 'evil.mjs'),
      `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'x');\n`,
    );
    await writeFile(
      join(ws.project, '.env'),
      `NODE_OPTIONS=--import=${join(ws.root, 'evil.mjs')}\nGREETING=hi\n`,
    );
    const tool = NODE_TOOL(
      'demo',
      'console.log(JSON.stringify({ success: true, greeting: process.env.GREETING ?? null }));',
    );
    await ws.write('project', 'tools/demo/envy.js', tool);
    await ws.write('system', 'tools/demo/sysenvy.js', tool);
    const executor = await ws.executor({ PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath });
    expect(await executor.executeTool('demo/envy')).toMatchObject({
      status: 'success',
      data: { greeting: 'hi' },
    });
    expect(await executor.executeTool('demo/sysenvy')).toMatchObject({
      status: 'success',
      data: { greeting: null },
    });
    const { existsSync } = await import('node:fs');
    expect(existsSync(marker)).toBe(false);
  });

  it('caller values are never ${VAR}-expanded and cannot redirect an HTTP tool or its credentials', async () => {
    const seen: { url?: string; auth?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({ url: req.url, auth: req.headers.authorization, body });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ws = await createWorkspace();
      await ws.write(
        'project',
        'tools/demo/api.yaml',
        `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: demo\nparameters: [{ name: q, type: string }]\nconfig:\n  url: "${base}/items/{q}"\n  auth: { type: bearer, token: "\${API_TOKEN}" }\n`,
      );
      const executor = await ws.executor({ PATH: process.env.PATH, API_TOKEN: 'tok', SECRET: 's3cr3t' });
      const result = await executor.executeTool('demo/api', {
        q: '${SECRET}',
        url: 'http://127.0.0.1:1/steal',
        note: '${SECRET}',
      });
      expect(result.status, JSON.stringify(result)).toBe('success');
      expect(seen).toEqual([
        // The caller's value is one percent-encoded path segment.
        { url: '/items/%24%7BSECRET%7D', auth: 'Bearer tok', body: '{"q":"${SECRET}","note":"${SECRET}"}' },
      ]);
    } finally {
      server.close();
    }
  });

  it("a caller's value cannot fill the host or port of an HTTP tool's url (where its token goes)", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.headers.host}${req.url}`);
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const ws = await createWorkspace();
      const tool = (url: string, extra = '') =>
        `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: demo\nparameters: [{ name: region, type: string }]\nconfig:\n  url: "${url}"\n${extra}  auth: { type: bearer, token: "\${API_TOKEN}" }\n`;
      await ws.write('project', 'tools/demo/hosted.yaml', tool(`http://{region}:${port}/v1`));
      await ws.write('project', 'tools/demo/ported.yaml', tool('http://127.0.0.1:{region}/v1'));
      // Through one of the config's own keys: still the caller's value in the host.
      await ws.write('project', 'tools/demo/based.yaml', tool('{base}/v1', '  base: "http://{region}"\n'));
      // One slash after the scheme: the URL parser still takes what follows as the host.
      await ws.write('project', 'tools/demo/slashed.yaml', tool(`http:/{region}:${port}/v1`));
      await ws.write(
        'project',
        'tools/demo/pathed.yaml',
        tool(`http://127.0.0.1:${port}/v1/{region}?r={region}`),
      );
      const executor = await ws.executor({ PATH: process.env.PATH, API_TOKEN: 'tok' });
      for (const [id, region] of [
        ['demo/hosted', '127.0.0.2'],
        ['demo/ported', String(port)],
        ['demo/based', `127.0.0.2:${port}`],
        ['demo/slashed', '127.0.0.2'],
      ] as const) {
        const result = await executor.executeTool(id, { region });
        expect(result, id).toMatchObject({ status: 'error', error_type: 'validation' });
        expect((result as { error: string }).error).toContain("Parameter 'region' would choose the host");
        expect(JSON.stringify(result)).toContain('signed tool config must name the scheme, host and port');
      }
      // The path and the query stay the caller's.
      const pathed = await executor.executeTool('demo/pathed', { region: 'eu' });
      expect(pathed.status, JSON.stringify(pathed)).toBe('success');
      expect(seen).toEqual([`127.0.0.1:${port}/v1/eu?r=eu`]);
    } finally {
      server.close();
    }
  });

  it('verify_deps refuses a directory symlink that leaves the anchor', async () => {
    const ws = await createWorkspace();
    await ws.write('project', 'tools/pkg/main.js', NODE_TOOL('pkg', 'console.log("{}");'));
    await writeFile(join(ws.project, '.ai', 'tools', 'pkg', 'package.json'), '{"type":"module"}');
    await mkdir(join(ws.root, 'elsewhere'));
    await writeFile(join(ws.root, 'elsewhere', 'x.mjs'), 'export const evil = 1;\n');
    await symlink(join(ws.root, 'elsewhere'), join(ws.project, '.ai', 'tools', 'pkg', 'lib'));
    const result = await (await ws.executor()).executeTool('pkg/main');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(result.error).toMatch(/^Symlink escape: .*lib resolves to/);
  });

  it('a dry run verifies the files the runtime hands its interpreter (the launcher)', async () => {
    const ws = await createWorkspace();
    await ws.write('project', 'tools/demo/ok.js', NODE_TOOL('demo', 'console.log("{}");'));
    await appendFile(
      join(ws.system, '.ai', 'tools', 'rye', 'core', 'runtimes', 'node', 'lib', 'launch.mjs'),
      '\n// tampered\n',
    );
    const dry = await (await ws.executor()).executeTool('demo/ok', {}, { dryRun: true });
    expect(dry).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(dry.error).toMatch(/Content modified since signing: .*launch\.mjs/);
  });

  it('CONFIG_RESOLVE merges config system → user → project, and refuses a tampered config file', async () => {
    const ws = await createWorkspace();
    await ws.write(
      'project',
      'tools/demo/conf.js',
      NODE_TOOL(
        'demo',
        'export const CONFIG_RESOLVE = { path: "demo/settings.yaml" };\nlet r = ""; for await (const c of process.stdin) r += c;\nconsole.log(JSON.stringify({ success: true, got: JSON.parse(r).resolved_config }));',
      ),
    );
    await ws.write('system', 'config/demo/settings.yaml', 'a: 1\nnested: { x: 1, y: 1 }\n');
    await ws.write('user', 'config/demo/settings.yaml', 'nested: { y: 2 }\n', null);
    const projectConfig = await ws.write('project', 'config/demo/settings.yaml', 'b: 3\n');
    const executor = await ws.executor();
    expect(await executor.executeTool('demo/conf')).toMatchObject({
      data: { got: { a: 1, b: 3, nested: { x: 1, y: 2 } } },
    });
    await appendFile(projectConfig, 'b: 4\n');
    expect((await executor.executeTool('demo/conf')).error).toMatch(
      /^Content modified since signing: .*settings\.yaml/,
    );
  });

  it('ids that are Object.prototype names are just missing tools', async () => {
    const executor = await (await createWorkspace()).executor();
    expect(await executor.executeTool('constructor')).toMatchObject({
      error: 'Tool not found: constructor',
      error_type: 'not_found',
    });
  });
});
