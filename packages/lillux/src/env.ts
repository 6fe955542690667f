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
 * Variables a project's unsigned `.env` may not set: they decide which interpreter runs or inject
 * code into it (NODE_OPTIONS=--import, BASH_ENV, LD_PRELOAD, …), which would let an unsigned file
 * run code inside signed tools. The host environment can still set them.
 */
const DOTENV_DENIED =
  /^(PATH|NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_.+|DYLD_.+|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PYTHONUSERBASE|PERL5OPT|PERL5LIB|RUBYOPT|RYE_.+)$/;

function readDotenv(projectPath: string): Env {
  let parsed: Env;
  try {
    parsed = parseDotenv(readFileSync(join(projectPath, '.env'), 'utf8'));
  } catch {
    return {};
  }
  return Object.fromEntries(Object.entries(parsed).filter(([key]) => !DOTENV_DENIED.test(key)));
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
    Object.assign(env, readDotenv(options.projectPath));
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
