/**
 * Attacks 6 and 7 of the integrity review: callers steering signed items, and a project's `.env`
 * reaching where it must not (DECISIONS 30). Caller values fill only placeholders the item
 * declares; `${VAR}` in user and system items never comes from the project's files; `.env` takes
 * only plain names that do not change how an interpreter starts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { dotenvKeyProblem } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});
const workspace = useWorkspaces();

/** An HTTP server on 127.0.0.1 that records what reaches it. */
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

const env = toolEnv;

describe('callers supply data only (attack 6)', () => {
  it('a parameter named like a config key does not swap the script a signed tool runs', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await ws.write(
      'project',
      'tools/victim/runner.yaml',
      [
        'version: "1.0.0"',
        'executor_id: rye/core/primitives/subprocess',
        'category: victim',
        'config:',
        '  command: "${RYE_KERNEL_NODE}"',
        '  args: ["-e", "{script}"]',
        `  script: "console.log(JSON.stringify({ who: 'signed' }))"`,
        '',
      ].join('\n'),
    );
    const executor = await ws.executor(env());
    const result = await executor.executeTool('victim/runner', {
      script: `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'pwned')`,
    });
    expect(result).toMatchObject({ status: 'success', data: { who: 'signed' } });
    expect(existsSync(marker)).toBe(false);
  });

  it("a parameter named like a config key does not send an HTTP tool's bearer token to another host", async () => {
    const good = await recorder();
    const evil = await recorder();
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/api.yaml',
      [
        'version: "1.0.0"',
        'executor_id: rye/core/runtimes/http/http',
        'category: victim',
        'parameters: [{ name: item, type: string }]',
        'config:',
        `  base: "${good.url}"`,
        '  url: "{base}/v1/{item}"',
        '  method: GET',
        '  auth: { type: bearer, token: "${API_TOKEN}" }',
        '',
      ].join('\n'),
    );
    const executor = await ws.executor(env({ API_TOKEN: 'tok-123' }));
    const result = await executor.executeTool('victim/api', { base: evil.url, item: 'x', method: 'DELETE' });
    expect(result).toMatchObject({ status: 'success' });
    expect(evil.seen).toEqual([]);
    expect(good.seen).toEqual([{ path: '/v1/x', auth: 'Bearer tok-123' }]);
  });

  it('a declared parameter fills its placeholder; an undeclared one is named in the error', async () => {
    const good = await recorder();
    const ws = await workspace();
    const tool = (declared: string) =>
      `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: victim\nparameters: [${declared}]\nconfig:\n  url: "${good.url}/items/{id}"\n  method: GET\n`;
    await ws.write('project', 'tools/victim/declared.yaml', tool('{ name: id, type: string }'));
    await ws.write('project', 'tools/victim/undeclared.yaml', tool(''));
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/declared', { id: '7' })).toMatchObject({ status: 'success' });
    expect(good.seen).toEqual([{ path: '/items/7' }]);
    const refused = await executor.executeTool('victim/undeclared', { id: '7' });
    expect(refused).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(String(refused.hint)).toMatch(/does not declare it/);
  });

  it('a caller may shorten a timeout, not lengthen one the tool does not declare', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/slow.yaml',
      'version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: victim\nconfig:\n  command: "${RYE_KERNEL_NODE}"\n  args: ["-e", "setTimeout(() => {}, 3000)"]\n  timeout: 1\n',
    );
    const executor = await ws.executor(env());
    const started = Date.now();
    expect(await executor.executeTool('victim/slow', { timeout: 600 })).toMatchObject({
      status: 'error',
      error_type: 'timeout',
    });
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('a caller cwd cannot leave the project through a symlink inside it', async () => {
    const ws = await workspace();
    await symlink(ws.root, join(ws.project, 'up'));
    await ws.write(
      'project',
      'tools/victim/where.yaml',
      'version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: victim\nconfig:\n  command: "${RYE_KERNEL_NODE}"\n  args: ["-e", "console.log(JSON.stringify({ cwd: process.cwd() }))"]\n',
    );
    const executor = await ws.executor(env());
    const result = await executor.executeTool('victim/where', { cwd: 'up' });
    expect(result).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(String(result.error)).toMatch(/outside the project/);
  });

  it("a project's .env never feeds ${VAR} in a signed user runtime's config", async () => {
    const good = await recorder();
    const evil = await recorder();
    const ws = await workspace();
    await ws.write(
      'user',
      'tools/acme/api-runtime.yaml',
      [
        'version: "1.0.0"',
        'tool_type: runtime',
        'executor_id: rye/core/primitives/http_client',
        'category: acme',
        'config:',
        '  url: "${API_BASE}/v1"',
        '  method: GET',
        '  auth: { type: bearer, token: "${API_TOKEN}" }',
        '',
      ].join('\n'),
    );
    await ws.write(
      'project',
      'tools/victim/uses.yaml',
      'version: "1.0.0"\nexecutor_id: acme/api-runtime\ncategory: victim\n',
    );
    await writeFile(join(ws.project, '.env'), `API_BASE=${evil.url}\nAPI_TOKEN=attacker-chosen\n`);
    const executor = await ws.executor(env({ API_BASE: good.url, API_TOKEN: 'tok-123' }));
    expect(await executor.executeTool('victim/uses')).toMatchObject({ status: 'success' });
    expect(evil.seen).toEqual([]);
    expect(good.seen).toEqual([{ path: '/v1', auth: 'Bearer tok-123' }]);
  });
});

describe("a project's .env (attack 7)", () => {
  it('BASH_FUNC_x%% cannot override a function or builtin in a bash tool', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await writeFile(
      join(ws.project, '.env'),
      `BASH_FUNC_echo%%=() { touch ${marker}; builtin echo "$@"; }\nGREETING=hi\n`,
    );
    await ws.write(
      'project',
      'tools/victim/hello.sh',
      '# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "victim"\necho "{\\"success\\": true, \\"greeting\\": \\"$GREETING\\"}"\n',
    );
    const executor = await ws.executor(env());
    const result = await executor.executeTool('victim/hello');
    expect(result).toMatchObject({ status: 'success', data: { greeting: 'hi' } });
    expect(existsSync(marker)).toBe(false);
    expect(JSON.stringify(result.warnings)).toMatch(/BASH_FUNC_echo%%.*not a plain variable name/);
  });

  it("HOME cannot point Python's user site-packages (and its .pth files) into the project", async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const site = execFileSync(
      'python3',
      ['-c', 'import site, sys; print(site.USER_SITE.replace(site.getuserbase(), "", 1))'],
      { encoding: 'utf8', env: { ...process.env, HOME: ws.project } },
    ).trim();
    const userSite = join(ws.project, '.local', site);
    await mkdir(userSite, { recursive: true });
    await writeFile(
      join(userSite, 'evil.pth'),
      `import os; open(${JSON.stringify(marker)}, "w").write("pwned")\n`,
    );
    await writeFile(join(ws.project, '.env'), `HOME=${ws.project}\n`);
    await ws.write(
      'project',
      'tools/victim/home.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "victim"\nimport json, os\nprint(json.dumps({"success": True, "home": os.environ.get("HOME")}))\n',
    );
    const executor = await ws.executor(env({ HOME: ws.root }));
    const result = await executor.executeTool('victim/home');
    expect(result).toMatchObject({ status: 'success', data: { home: ws.root } });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses every family that changes how a program starts or whom it trusts, and names plain ones fine', () => {
    const refused = [
      'PATH',
      'SHELL',
      'PAGER',
      'EDITOR',
      'LESSOPEN',
      'BASH_ENV',
      'BASH_FUNC_ls%%',
      'ENV',
      'SHELLOPTS',
      'PS4',
      'PROMPT_COMMAND',
      'IFS',
      'CDPATH',
      'GLOBIGNORE',
      'LD_PRELOAD',
      'GLIBC_TUNABLES',
      'LUA_PATH',
      'LD_LIBRARY_PATH',
      'DYLD_INSERT_LIBRARIES',
      'GCONV_PATH',
      'HOME',
      'XDG_CONFIG_HOME',
      'PYTHONPATH',
      'PYTHONSTARTUP',
      'PYTHONHOME',
      'PYTHONUSERBASE',
      'PYTHONPYCACHEPREFIX',
      'PIP_INDEX_URL',
      'VIRTUAL_ENV',
      'NODE_OPTIONS',
      'NODE_PATH',
      'NODE_EXTRA_CA_CERTS',
      'npm_config_registry',
      'PERL5OPT',
      'PERL5LIB',
      'RUBYOPT',
      'RUBYLIB',
      'JAVA_TOOL_OPTIONS',
      'CLASSPATH',
      'GIT_SSH_COMMAND',
      'GIT_CONFIG_GLOBAL',
      'SSL_CERT_FILE',
      'OPENSSL_CONF',
      'REQUESTS_CA_BUNDLE',
      'HTTPS_PROXY',
      'http_proxy',
      'ALL_PROXY',
      'RYE_DEV_MODE',
      'USER_SPACE',
      'A-B',
      '1X',
      'X Y',
      '',
    ];
    for (const key of refused) expect(dotenvKeyProblem(key), key).toBeDefined();
    for (const key of ['GREETING', 'API_TOKEN', 'DATABASE_URL', 'MY_HOME_DIR', '_PRIVATE', 'lower_case']) {
      expect(dotenvKeyProblem(key), key).toBeUndefined();
    }
  });
});
