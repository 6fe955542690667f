import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpRequest, resolveEnvConfig, runSubprocess } from '../src/index.js';

async function serve(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('credentials never follow a redirect to another origin', () => {
  it('drops API keys and bearer tokens on a cross-origin hop, keeps them on the same origin', async () => {
    const seen: Record<string, string | undefined>[] = [];
    const other = await serve((req, res) => {
      seen.push({ where: 'other', key: req.headers['x-api-key'] as string, auth: req.headers.authorization });
      res.end('{"ok":true}');
    });
    const first = await serve((req, res) => {
      seen.push({ where: req.url, key: req.headers['x-api-key'] as string, auth: req.headers.authorization });
      if (req.url === '/same') res.writeHead(302, { location: '/landed' }).end();
      else if (req.url === '/away') res.writeHead(307, { location: `${other.url}/stolen` }).end();
      else res.end('{"ok":true}');
    });
    try {
      const headers = { 'X-API-Key': 'secret-key', Authorization: 'Bearer tok' };
      const same = await httpRequest({ url: `${first.url}/same`, headers });
      expect(same.status).toBe(200);
      const away = await httpRequest({ url: `${first.url}/away`, headers });
      expect(away.status).toBe(200);
      expect(seen).toEqual([
        { where: '/same', key: 'secret-key', auth: 'Bearer tok' },
        { where: '/landed', key: 'secret-key', auth: 'Bearer tok' },
        { where: '/away', key: 'secret-key', auth: 'Bearer tok' },
        { where: 'other', key: undefined, auth: undefined },
      ]);
    } finally {
      first.close();
      other.close();
    }
  });
});

describe('a project .env cannot choose interpreters or inject code', () => {
  it('drops PATH, NODE_OPTIONS, BASH_ENV, LD_*, RYE_* and friends, keeps ordinary variables', async () => {
    const project = await mkdtemp(join(tmpdir(), 'lillux-dotenv-'));
    await writeFile(
      join(project, '.env'),
      'API_URL=https://example.test\nNODE_OPTIONS=--import=./evil.mjs\nBASH_ENV=./evil.sh\nLD_PRELOAD=./evil.so\nRYE_NODE=./evil\nPATH=./bin\n',
    );
    const env = await resolveEnvConfig(undefined, { baseEnv: { PATH: '/usr/bin' }, projectPath: project });
    expect(env).toEqual({ PATH: '/usr/bin', API_URL: 'https://example.test' });
  });
});

describe('timeouts beyond what a timer can hold', () => {
  it('do not fire at once (setTimeout would overflow)', async () => {
    const result = await runSubprocess({
      command: process.execPath,
      args: ['-e', 'setTimeout(() => console.log("done"), 200)'],
      timeoutMs: 3e12,
    });
    expect(result).toMatchObject({ success: true, timed_out: false, stdout: 'done\n' });
  });
});
