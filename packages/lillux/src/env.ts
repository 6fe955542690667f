/**
 * ENV_CONFIG resolution (items-and-execution spec §4.3) and `${VAR}` templates.
 * Pure: reads the environment it is given and never mutates `process.env`.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { childProcess } from './child-process.js';

export type Env = Record<string, string>;

export interface InterpreterConfig {
  /** `local_binary` | `system_binary` | `command`, or the seeds' aliases `venv_python` | `binary`. */
  type: string;
  /** Variable that receives the interpreter path. */
  var?: string;
  fallback?: string;
  binary?: string;
  candidates?: string[];
  search_paths?: string[];
  search_roots?: string[];
  resolve_cmd?: string[];
}

export interface EnvConfig {
  interpreter?: InterpreterConfig;
  env?: Record<string, unknown>;
}

export interface ResolveEnvOptions {
  /** Environment to start from; defaults to a copy of `process.env`. */
  baseEnv?: Record<string, string | undefined>;
  /** Project root: `.env` is read from here and `local_binary` searches it last. */
  projectPath?: string;
  /** Roots searched before the project by `local_binary` (already templated by the caller). */
  searchRoots?: string[];
  /** Read `<projectPath>/.env` (default true). */
  loadDotenv?: boolean;
  /** Told about each `.env` entry that was refused (see `dotenvKeyProblem`). */
  onDotenvWarning?: (message: string) => void;
}

// A default may itself hold one level of `${VAR}` (e.g. `${RYE_NODE:-${RYE_KERNEL_NODE}}`).
const TEMPLATE = /\$\{([A-Z_][A-Z0-9_]*)(?::-((?:[^{}]|\$\{[^{}]*\})*))?\}/g;

/** Expands `${VAR}` and `${VAR:-default}` (upper-case names); missing → default or empty. */
export function expandEnvTemplate(text: string, env: Record<string, string | undefined>): string {
  if (!text.includes('${')) return text;
  return text.replace(TEMPLATE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    return fallback ? expandEnvTemplate(fallback, env) : '';
  });
}

/** Parses `.env` text: `KEY=VALUE`, `export KEY=VALUE`, `#` comments, matching quotes stripped. */
export function parseDotenv(text: string): Env {
  const result: Env = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line
      .slice(0, eq)
      .trim()
      .replace(/^export\s+/, '');
    let value = line.slice(eq + 1).trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1);
    }
    if (key) result[key] = value;
  }
  return result;
}

/**
 * What a project's unsigned `.env` may not set (DECISIONS 30): anything but a plain name, and any
 * variable that decides which program runs, what an interpreter, shell, build or CLI loads or
 * reads as configuration when it starts, where temporary files and caches of compiled code go, or
 * whom the tool trusts on the network. Otherwise an unsigned file would run code inside signed
 * tools (`MAKEFILES=evil.mk` makes every `make` evaluate it, `KUBECONFIG` names an exec plugin,
 * `GOFLAGS=-toolexec=...` wraps the compiler). The host environment can still set all of them.
 *
 * One row per family: exact names and patterns (`*` stands for any run of characters), separated
 * by white space. Names are compared upper-cased (npm reads npm_config_*, curl reads http_proxy).
 * The reason is what the warning says the variable does ("it <reason>"). A denylist cannot know
 * every program's variables: a tool that starts a program configured by another one should set
 * that variable in its own signed env_config.
 */
const DOTENV_DENIED_FAMILIES: ReadonlyArray<{ reason: string; names: string }> = [
  {
    // The search path, and programs that tools start on our behalf by name or command line (a
    // D-Bus address may be `unixexec:path=...`).
    reason: 'chooses which programs run',
    names: `PATH SHELL *PAGER MANOPT *EDITOR VISUAL BROWSER TERMINAL LESS* *ASKPASS TAR_OPTIONS RSYNC_*
      FZF_DEFAULT_COMMAND DBUS_* PUPPETEER_* PLAYWRIGHT_BROWSERS_PATH CHROME_PATH CHROME_BIN
      FIREFOX_BIN *_EXECUTABLE_PATH *_BINARY_PATH *_BIN_PATH ESBUILD_* GROFF_* MANPATH MANPAGER MANROFF* MANSECT MAN_* KUBECTL_* RAKEOPT
      PLAYWRIGHT_* SE_MANAGER_PATH`,
  },
  {
    // Startup files, exported functions (BASH_FUNC_x%%), options, word splitting, prompts.
    reason: 'changes how a shell starts',
    names: `BASH* ENV SHELLOPTS PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND IFS CDPATH GLOBIGNORE ZDOTDIR FPATH`,
  },
  {
    // The dynamic loader and the plugin folders of system libraries (charset modules, GUI and
    // graphics plugins, SASL and Kerberos modules).
    reason: 'loads native code',
    names: `LD_* DYLD_* GCONV_PATH GLIBC_TUNABLES MALLOC_* GTK_* GIO_* GDK_* QT_* GST_* LIBGL_* __EGL_*
      VK_* OCL_ICD_* LIBVA_* VDPAU_* SASL_* KRB5* *_LIBRARY_PATH *_LIBRARY NAPI_RS_* PRISMA_* TCL_*
      TK_* LIBMYSQL_*`,
  },
  {
    // Locales change how bash splits multibyte text; message catalogues feed `$"…"` strings.
    reason: 'changes which data files the C library parses',
    names: `LOCPATH NLSPATH TERMINFO* TERMCAP LANG LANGUAGE LC_* TEXTDOMAIN*`,
  },
  {
    // ~/.bashrc, Python's user site (.pth files), git, curl, wget, gpg and editor configuration.
    reason: 'moves where startup and config files are read',
    names: `HOME XDG_* GNUPGHOME CURL_HOME WGETRC SYSTEM_WGETRC NETRC VIMINIT EXINIT VIMRUNTIME
      MYVIMRC MYGVIMRC EMACSLOADPATH PSQLRC PGSERVICEFILE PGSYSCONFDIR PGSSL* MYSQL_HOME MYSQL_TEST_LOGIN_FILE GEMRC
      ANSIBLE_* BOTO_CONFIG HF_MODULES_CACHE NUMBA_CACHE_DIR TF_DATA_DIR`,
  },
  {
    // A cache of compiled code there (tsx, Python, Go) runs instead of the verified source.
    reason: 'moves temporary files and caches of compiled code',
    names: `TMPDIR TMP TEMP TEMPDIR`,
  },
  {
    // Credential processes, exec plugins, credential helpers, CLI plugins, daemons to talk to.
    reason: 'points a cloud, container or cluster CLI at config that runs programs',
    names: `AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE KUBECONFIG DOCKER_* CONTAINERS_*
      REGISTRY_AUTH_FILE CLOUDSDK_* GOOGLE_APPLICATION_CREDENTIALS
      GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES AZURE_CONFIG_DIR HELM_* TF_CLI_* TERRAFORM_CONFIG
      TF_PLUGIN_CACHE_DIR AWS_CONTAINER_* AWS_ENDPOINT_URL*`,
  },
  {
    // make's extra makefiles and flags, the compiler and its plugins (-fplugin), autoconf's site file.
    reason: 'changes what a build runs',
    names: `MAKE* MFLAGS GNUMAKEFLAGS CC CXX CPP LD AS AR NM RANLIB STRIP OBJCOPY OBJDUMP FC F77 YACC
      LEX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS LDLIBS FFLAGS ASFLAGS GCC_EXEC_PREFIX COMPILER_PATH
      LIBRARY_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH OBJC_INCLUDE_PATH CCACHE_* DISTCC_*
      PKG_CONFIG* CMAKE_* CONFIG_SITE GCC_* DEPENDENCIES_OUTPUT SUNPRO_DEPENDENCIES`,
  },
  {
    // Version managers and environment tools: their shims pick the interpreter from these (a
    // `*_ROOT` or `*_VERSION` in the project runs its binary) and source hook scripts from them
    // (`PYENV_HOOK_PATH=.hooks` runs `.hooks/exec/*.bash` before python3).
    reason: 'chooses which interpreter a version manager runs, or the hooks it sources',
    names: `PYENV* RBENV* NODENV* GOENV* JENV* PLENV* PHPENV* LUAENV* SWIFTENV* SCALAENV* SBTENV*
      EXENV* ERLENV* CRENV* TFENV* TGENV* *ENV_HOOK_PATH ASDF_* MISE_* RTX_* SDKMAN_* JABBA_* GVM_*
      RVM_* N_PREFIX NVS_* PROTO_* AQUA_* PKGX_* DIRENV_* NIX_* DEVBOX_* FLOX_* HERMIT_* PIXI_* MAMBA_* MAMBARC
      MICROMAMBA_* CONDARC PIPENV_* WORKON_HOME VIRTUALENVWRAPPER_* PEX_* KERL_* KIEX_* OPAM*
      GHCUP_* STACK_ROOT STACK_YAML CABAL_DIR CABAL_CONFIG JULIA_* JULIAUP_* COURSIER_* HOMEBREW_*
      DEVELOPER_DIR SDKROOT TOOLCHAINS`,
  },
  {
    reason: 'changes how Python starts',
    names: `PYTHON* PIP_* PIPX_* UV_* VIRTUAL_ENV CONDA_* POETRY_* PDM_* HATCH_* TOX_* PYTEST_*
      COVERAGE_* IPYTHONDIR JUPYTER_* MPLCONFIGDIR MPLBACKEND`,
  },
  {
    reason: 'changes how Node, Deno or Bun starts',
    names: `NODE_* NPM_CONFIG_* YARN_* PNPM_* COREPACK_* TS_NODE_* TSX_* NVM_* VOLTA_* FNM_* DENO_*
      BUN_* ELECTRON_*`,
  },
  {
    reason: 'changes how the JVM starts',
    names: `JAVA_* JDK_* _JAVA_OPTIONS CLASSPATH MAVEN_* M2_HOME GRADLE_* SBT_OPTS ANT_*`,
  },
  {
    reason: 'changes how Go or Rust builds and runs code',
    names: `GOFLAGS GOROOT GOPATH GOBIN GOENV GOTOOLCHAIN GOPROXY GONOPROXY GOSUMDB GONOSUMDB
      GONOSUMCHECK GOPRIVATE GOINSECURE GOVCS GOAUTH GOCACHE GOMODCACHE GOWORK GOTMPDIR
      GOEXPERIMENT GODEBUG GO111MODULE GCCGO CGO_* CARGO_* RUSTC* RUSTDOC* RUSTFLAGS RUSTUP_*`,
  },
  {
    reason: 'changes how an interpreter starts',
    names: `PERL* RUBY* RBENV_* GEM_* BUNDLE_* IRBRC PHPRC PHP_INI_SCAN_DIR COMPOSER_* LUA_* TCLLIBPATH
      R_LIBS* R_PROFILE* R_ENVIRON* R_HOME DOTNET_* CORECLR_* COMPLUS_* NUGET_* ERL_* ELIXIR_*
      MIX_*`,
  },
  {
    reason: 'runs programs through version control',
    names: `GIT_* HGRCPATH HGEDITOR HGMERGE CVS_RSH SVN_SSH`,
  },
  {
    // CA bundles, TLS libraries and key logs, proxies that see every request, name resolution,
    // the ssh agent and askpass.
    reason: 'changes whom the network trusts',
    names: `SSH_* SSL* OPENSSL_* GNUTLS_* *_CA_BUNDLE *_CA_CERTS GRPC_DEFAULT_SSL_ROOTS_FILE_PATH
      HTTP_PROXY HTTPS_PROXY FTP_PROXY ALL_PROXY NO_PROXY GRPC_PROXY HOSTALIASES LOCALDOMAIN
      RES_OPTIONS RESOLV_*`,
  },
  { reason: 'configures ryeos', names: `RYE_* USER_SPACE LILLUX_*` },
];

/** The families as anchored patterns over upper-cased names (`*` = any run of characters). */
const DENIED: ReadonlyArray<[RegExp, string]> = DOTENV_DENIED_FAMILIES.map(({ reason, names }) => {
  const patterns = names.trim().split(/\s+/);
  return [
    new RegExp(`^(?:${patterns.map((n) => n.split('*').map(escapeRegExp).join('.*')).join('|')})$`),
    reason,
  ];
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a project's `.env` may not set `key`, or undefined when it may. */
export function dotenvKeyProblem(key: string): string | undefined {
  if (!PLAIN_NAME.test(key)) return 'is not a plain variable name';
  const upper = key.toUpperCase();
  for (const [family, reason] of DENIED) if (family.test(upper)) return reason;
  return undefined;
}

// Sync fs: these are a handful of stat calls on the way to spawning a process; a threadpool
// round trip each cost more than the calls themselves.
function readDotenv(projectPath: string, onWarning?: (message: string) => void): Env {
  let parsed: Env;
  try {
    parsed = parseDotenv(readFileSync(join(projectPath, '.env'), 'utf8'));
  } catch {
    return {};
  }
  const allowed: Env = {};
  for (const [key, value] of Object.entries(parsed)) {
    const problem = dotenvKeyProblem(key);
    if (problem === undefined) allowed[key] = value;
    else
      onWarning?.(
        `Ignored ${JSON.stringify(key)} in ${join(projectPath, '.env')}: it ${problem}; set it in your own environment if you mean it`,
      );
  }
  return allowed;
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return isFile(path);
  } catch {
    return false;
  }
}

/** PATH lookup of a binary name in the given environment. */
export async function whichBinary(
  name: string,
  env: Record<string, string | undefined>,
): Promise<string | undefined> {
  if (isAbsolute(name) || name.includes('/')) return isExecutable(name) ? name : undefined;
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? ['', '.exe', '.cmd'] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function normalizeInterpreter(config: InterpreterConfig): InterpreterConfig {
  if (config.type === 'venv_python') {
    return {
      ...config,
      type: 'local_binary',
      binary: config.binary ?? 'python',
      candidates: config.candidates ?? ['python3'],
      search_paths: config.search_paths ?? ['.venv/bin', '.venv/Scripts'],
    };
  }
  if (config.type === 'binary') return { ...config, type: 'system_binary' };
  return config;
}

async function findLocalBinary(config: InterpreterConfig, roots: string[]): Promise<string | undefined> {
  const names = [config.binary, ...(config.candidates ?? [])].filter((n): n is string => Boolean(n));
  const exts = process.platform === 'win32' ? ['', '.exe', '.cmd'] : [''];
  for (const root of roots) {
    for (const searchPath of config.search_paths ?? ['.']) {
      for (const name of names) {
        for (const ext of exts) {
          const candidate = join(root, searchPath, name + ext);
          if (isFile(candidate)) return candidate;
        }
      }
    }
  }
  return undefined;
}

function runResolveCommand(argv: string[], env: Env): Promise<string | undefined> {
  const [command, ...args] = argv;
  if (!command) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    childProcess().execFile(command, args, { env, timeout: 5000 }, (error, stdout) => {
      const first = String(stdout).split('\n')[0]?.trim();
      resolve(!error && first ? first : undefined);
    });
  });
}

/** Resolves the interpreter of an ENV_CONFIG into its variable; returns the path or undefined. */
export async function resolveInterpreter(
  raw: InterpreterConfig,
  env: Env,
  options: { projectPath?: string; searchRoots?: string[] } = {},
): Promise<string | undefined> {
  const config = normalizeInterpreter(raw);
  const current = config.var ? env[config.var] : undefined;
  if (current && isFile(current)) return current;
  let found: string | undefined;
  if (config.type === 'local_binary') {
    const roots = [...(options.searchRoots ?? []), ...(options.projectPath ? [options.projectPath] : [])];
    found = await findLocalBinary(config, roots);
  } else if (config.type === 'system_binary' && config.binary) {
    found = await whichBinary(config.binary, env);
  } else if (config.type === 'command' && config.resolve_cmd) {
    found = await runResolveCommand(config.resolve_cmd, env);
  }
  return found ?? config.fallback;
}

/**
 * Builds the environment for one ENV_CONFIG: base env, then `.env` (names the base env does not
 * set), then the interpreter variable, then the `env` map in order (each value templated against
 * what is built so far).
 */
export async function resolveEnvConfig(
  config: EnvConfig | undefined,
  options: ResolveEnvOptions = {},
): Promise<Env> {
  const env: Env = {};
  for (const [key, value] of Object.entries(options.baseEnv ?? process.env)) {
    if (value !== undefined) env[key] = value;
  }
  // The host's environment wins over a project's `.env` (the dotenv convention): a repository's
  // file must not replace a value the user set, such as the base URL a token goes to.
  if (options.projectPath && options.loadDotenv !== false) {
    for (const [key, value] of Object.entries(readDotenv(options.projectPath, options.onDotenvWarning)))
      if (!Object.hasOwn(env, key)) env[key] = value;
  }
  if (!config) return env;
  if (config.interpreter) {
    const found = await resolveInterpreter(config.interpreter, env, options);
    if (config.interpreter.var && found !== undefined) env[config.interpreter.var] = found;
  }
  for (const [key, value] of Object.entries(config.env ?? {})) {
    if (value === null || value === undefined) continue;
    env[key] = typeof value === 'string' ? expandEnvTemplate(value, env) : String(value);
  }
  return env;
}
