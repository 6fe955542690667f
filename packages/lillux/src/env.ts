/**
 * ENV_CONFIG resolution (items-and-execution spec §4.3) and `${VAR}` templates.
 * Pure: reads the environment it is given and never mutates `process.env`.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

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

// Sync fs: these are a handful of stat calls on the way to spawning a process; a threadpool
// round trip each cost more than the calls themselves.
/**
 * What a project's unsigned `.env` may not set (DECISIONS 30): anything but a plain name, and any
 * variable that decides which program runs, what an interpreter or shell loads when it starts, or
 * whom the tool trusts on the network. Otherwise an unsigned file would run code inside signed
 * tools. Matched without regard to case (npm reads npm_config_*, curl reads http_proxy). The host
 * environment can still set all of them.
 */
const DOTENV_DENIED_FAMILIES: Array<[RegExp, string]> = [
  // Which programs run: the search path, and programs tools start on our behalf.
  [/^(PATH|SHELL|PAGER|MANPAGER|EDITOR|VISUAL|BROWSER|LESS.*)$/, 'chooses which programs run'],
  // Shells: startup files, exported functions (BASH_FUNC_x%%), options, word splitting, prompts.
  [
    /^(BASH.*|ENV|SHELLOPTS|PS[0-9]|PROMPT_COMMAND|IFS|CDPATH|GLOBIGNORE|ZDOTDIR)$/,
    'changes how a shell starts',
  ],
  // The dynamic loader and C library: preloaded libraries, charset and locale modules.
  [/^(LD_.*|DYLD_.*|GCONV_PATH|LOCPATH|NLSPATH|GLIBC_TUNABLES|MALLOC_.*)$/, 'loads native code'],
  // Where startup and config files are found: ~/.bashrc, Python's user site (.pth files), git config.
  [
    /^(HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|XDG_DATA_HOME|XDG_DATA_DIRS)$/,
    'moves where startup files are read',
  ],
  // Interpreters and their package tools.
  [/^(PYTHON.*|PIP_.*|UV_.*|VIRTUAL_ENV|CONDA_.*)$/, 'changes how Python starts'],
  [/^(NODE_.*|NPM_CONFIG_.*|COREPACK_.*|TS_NODE_.*|TSX_.*)$/, 'changes how Node starts'],
  [
    /^(PERL.*|RUBY.*|GEM_.*|BUNDLE_.*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH)$/,
    'changes how an interpreter starts',
  ],
  [/^(GIT_.*)$/, 'runs programs through git'],
  [/^(LUA_.*|TCLLIBPATH|R_LIBS.*|R_PROFILE.*|PHPRC|PHP_INI_SCAN_DIR)$/, 'changes what an interpreter loads'],
  // Trust on the network: CA bundles, OpenSSL engines, proxies that see every request.
  [/^(SSL_.*|OPENSSL_.*|.*_CA_BUNDLE|HTTPS?_PROXY|ALL_PROXY|NO_PROXY)$/, 'changes whom the network trusts'],
  // ryeos itself.
  [/^(RYE_.*|USER_SPACE|LILLUX_.*)$/, 'configures ryeos'],
];

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a project's `.env` may not set `key`, or undefined when it may. */
export function dotenvKeyProblem(key: string): string | undefined {
  if (!PLAIN_NAME.test(key)) return 'is not a plain variable name';
  const upper = key.toUpperCase();
  for (const [family, reason] of DOTENV_DENIED_FAMILIES) if (family.test(upper)) return reason;
  return undefined;
}

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
    execFile(command, args, { env, timeout: 5000 }, (error, stdout) => {
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
 * Builds the environment for one ENV_CONFIG: base env, then `.env`, then the interpreter
 * variable, then the `env` map in order (each value templated against what is built so far).
 */
export async function resolveEnvConfig(
  config: EnvConfig | undefined,
  options: ResolveEnvOptions = {},
): Promise<Env> {
  const env: Env = {};
  for (const [key, value] of Object.entries(options.baseEnv ?? process.env)) {
    if (value !== undefined) env[key] = value;
  }
  if (options.projectPath && options.loadDotenv !== false)
    Object.assign(env, readDotenv(options.projectPath, options.onDotenvWarning));
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
