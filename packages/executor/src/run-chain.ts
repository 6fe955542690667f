import { isAbsolute, resolve } from 'node:path';
import type {
  ConfineSpec,
  EnvConfig,
  EventSink,
  HttpMethod,
  WarmCallOptions,
  WorkerSettings,
} from '@ryeos/lillux';
import {
  httpRequest,
  httpStream,
  RyeError,
  resolveEnvConfig,
  runSubprocess,
  runWarm,
  startWarm,
} from '@ryeos/lillux';
import type { AnchorState } from './anchor.js';
import { applyEnvPaths } from './anchor.js';
import { ensureBytecodeCache } from './bytecode-cache.js';
import type { ChainElement, PrimitiveId } from './chain.js';
import { isPlainObject } from './plain-object.js';
import { PROVIDER_KEY_NAMES, TELEMETRY_KEY_NAMES } from './provider-keys.js';
import { isInside, realOr } from './real-paths.js';
import { snapshotFallbackRoot } from './snapshot.js';
import { expandEnvInConfig, fillTemplate, renderPlaceholders } from './template.js';
import { refuseCallerValuesInUrlHost } from './url-host-placeholders.js';

export interface RunContext {
  projectPath: string;
  userSpace: string;
  systemSpace: string;
  hostEnv: Record<string, string | undefined>;
  /** Function-style workers run as threads of this one-shot host (ExecuteToolOptions.workerThread). */
  workerThread?: boolean;
  /** Host variables the tool does not inherit (ExecuteToolOptions.withheldEnv). */
  withheldEnv?: readonly string[];
  /** The managed thread making the call (ExecuteToolOptions.parentThreadId). */
  parentThreadId?: string;
  /** Every process the run starts is confined to these folders (RyeSettings.confine). */
  confine?: ConfineSpec;
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

export interface RunOutcome {
  success: boolean;
  data: unknown;
  error?: string;
  timedOut?: boolean;
  /** Notes for the envelope, e.g. that output was cut at the cap. */
  warnings?: string[];
}

/**
 * Output a run may hand back, per stream (stdout, stderr, an HTTP body), unless the item's config
 * sets `max_output_bytes`. MCP clients commonly read at most 10 MB per message (the TypeScript SDK
 * client's buffer), and a result is JSON inside JSON: 2 MiB stays well clear of that and of a
 * model's context, while a tool that means to return more can say so in its signed config.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 2 * 1024 * 1024;

function outputCap(config: Record<string, unknown>): number {
  const value = config.max_output_bytes;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
    ? value
    : DEFAULT_MAX_OUTPUT_BYTES;
}

function truncationNote(what: string, total: number | undefined, cap: number): string {
  const size = total === undefined ? 'was longer' : `was ${total} bytes`;
  return `${what} ${size}: only the first ${cap} bytes are returned (raise max_output_bytes in the tool's config to keep more)`;
}

/** Keys each element's env_config contributed (trace mode; never values). */
export type EnvContribution = { contributed_by: string; keys: string[] };

/**
 * Config keys that say *what* runs and where it goes. A caller may tune how it runs (timeout, cwd,
 * method, mode, retry — spec §4.5) but never swap the program, its environment or stdin, the
 * server and tool an MCP item is bound to, or an HTTP tool's destination and credentials.
 */
const IDENTITY_KEYS = new Set([
  'command',
  'args',
  'env',
  'input_data',
  // Where an HTTP tool sends its request and which credentials go along: overriding the url
  // while keeping the item's auth would hand its token to any host.
  'url',
  'headers',
  'auth',
  // The item's fixed parameters must stay fixed.
  'fixed_params',
  'params_key',
  // How a function-style runtime's worker is kept (a runtime's own setting).
  'worker',
]);

/**
 * Names a runtime reserves for itself (`reserved_params` in its signed YAML, e.g. the MCP
 * runtimes' `server`, `tool_name`, `server_config_path`): a caller can never set them and they
 * never reach the tool's own arguments. A runtime with reserved names is a data file like any other.
 */
export function reservedParameters(chain: readonly ChainElement[]): Set<string> {
  const names = new Set<string>();
  for (const element of chain) {
    const declared = element.metadata.fields.reserved_params;
    if (!Array.isArray(declared)) continue;
    for (const name of declared) if (typeof name === 'string') names.add(name);
  }
  return names;
}

/** Reserved names that configure an HTTP call and so are not part of its JSON body (spec §4.8). */
const HTTP_RESERVED = new Set([
  'timeout',
  'cwd',
  'input_data',
  'url',
  'method',
  'headers',
  'body',
  'mode',
  'retry',
  'auth',
]);

/** Parameters that configure the run and never reach the tool (spec §4.5 step 4). */
const NOT_FOR_TOOL = new Set([
  'env',
  'tool_path',
  'tool_dir',
  'tool_parent',
  'anchor_path',
  'runtime_lib',
  'project_path',
  'user_space',
  'system_space',
  'cwd',
  'timeout',
  'fixed_params',
  'params_key',
]);

/**
 * Builds the child environment: host (+ the project's `.env`), then each env_config from
 * primitive to tool (tool wins). The project's `.env` and its interpreters (`.venv`,
 * node_modules/.bin) only serve project tools: otherwise an unsigned project file such as
 * `.env` with NODE_OPTIONS, or a `.venv/bin/python`, would run code inside signed user and
 * system tools (DECISIONS 4: system items always verify).
 *
 * Also returns `trusted`: the same environment built without the project's `.env`. `${VAR}` in a
 * user or system element's config expands from it (DECISIONS 30), so an unsigned `.env` cannot
 * point a signed item's URL, token or command somewhere else; so does a project tool's config
 * when it carries a value from the host (see `carriesHostCredential`).
 */
async function chainEnvironment(chain: ChainElement[], anchor: AnchorState, context: RunContext) {
  const projectTool = chain[0]!.space.name === 'project';
  const projectPath = projectTool ? context.projectPath : undefined;
  const warnings: string[] = [];
  const build = async (withDotenv: boolean) => {
    let env = await resolveEnvConfig(undefined, {
      baseEnv: context.hostEnv,
      ...(projectPath ? { projectPath, loadDotenv: withDotenv } : {}),
      onDotenvWarning: (message) => warnings.push(message),
    });
    // Where the host is, before env_config runs, so its `${…}` templates can name these (e.g. a
    // private bytecode cache under the user space); set again below so no element overrides them.
    const where = () => {
      env.RYE_SYSTEM_SPACE = context.systemSpace;
      env.RYE_PROJECT_PATH = context.projectPath;
      env.USER_SPACE = context.userSpace;
      // Where this host puts snapshots when the user space is read-only: file tools refuse it too.
      env.RYE_SNAPSHOT_FALLBACK = snapshotFallbackRoot();
    };
    where();
    const contributions: EnvContribution[] = [];
    for (const element of [...chain].reverse()) {
      const envConfig = element.metadata.envConfig as EnvConfig | undefined;
      if (!envConfig) continue;
      const interpreter = envConfig.interpreter;
      const searchRoots = interpreter?.search_roots?.map((root) => fillTemplate(root, anchor.vars));
      env = await resolveEnvConfig(envConfig, {
        baseEnv: env,
        ...(projectPath ? { projectPath } : {}),
        loadDotenv: false,
        ...(searchRoots ? { searchRoots } : {}),
      });
      contributions.unshift({ contributed_by: element.id, keys: Object.keys(envConfig) });
    }
    applyEnvPaths(env, anchor.envPaths);
    env.RYE_KERNEL_NODE ??= process.execPath;
    // Where the host is, so tools (and copies of system tools in other spaces) can reach it.
    where();
    return { env, contributions };
  };
  const full = await build(true);
  const hostCredential = projectTool && carriesHostCredential(chain, context.hostEnv);
  const needsTrusted = hostCredential || (projectTool && chain.some((el) => el.space.name !== 'project'));
  const trusted = needsTrusted ? (await build(false)).env : full.env;
  const signedNames = signedEnvNames(chain);
  // What the chain's signed env_config sets expands as its config does: without the project's
  // `.env` when it carries a value of the host's (`TOKEN: ${ACME_TOKEN}` beside `BASE: ${ACME_BASE}`).
  if (hostCredential) {
    for (const name of signedNames) if (trusted[name] !== undefined) full.env[name] = trusted[name];
  }
  return {
    ...full,
    env: withoutWithheld(full.env, signedNames, context.withheldEnv),
    expand: full.env,
    trusted,
    hostCredential,
    signedNames,
    warnings,
  };
}

/** The variables the chain's signed `env_config`s set by name. */
function signedEnvNames(chain: readonly ChainElement[]): Set<string> {
  const names = new Set<string>();
  for (const element of chain) {
    const own = (element.metadata.envConfig as EnvConfig | undefined)?.env;
    if (own) for (const name of Object.keys(own)) names.add(name);
  }
  return names;
}

/**
 * The tool's environment less the withheld host variables (a thread's provider keys: a tool's
 * output goes to the model and the transcript), except those an element's signed `env_config`
 * sets by name. `${VAR}` in the chain's own config still expands from them.
 */
const WARM_WORKER_WITHHELD: readonly string[] = [...PROVIDER_KEY_NAMES, ...TELEMETRY_KEY_NAMES];

function withoutWithheld(
  env: Record<string, string>,
  signedNames: ReadonlySet<string>,
  withheld: readonly string[] | undefined,
): Record<string, string> {
  if (!withheld?.length) return env;
  const kept = { ...env };
  for (const name of withheld) if (!signedNames.has(name)) delete kept[name];
  return kept;
}

/**
 * A cwd from a parameter stays inside the project, also once symlinks are resolved (a link in
 * the project could otherwise point the run anywhere); the real folder is what the run gets.
 */
function confinedCwd(cwd: unknown, projectPath: string): string {
  if (typeof cwd !== 'string' || !cwd) return projectPath;
  const absolute = isAbsolute(cwd) ? cwd : resolve(projectPath, cwd);
  const real = realOr(absolute);
  const root = realOr(projectPath);
  if (isInside(real, root)) return real;
  throw new RyeError('VALIDATION', `cwd '${cwd}' is outside the project ${projectPath}`, {
    hint: 'Pass a cwd inside the project, or omit it to run in the project root.',
  });
}

function paramsForTool(
  params: Record<string, unknown>,
  config: Record<string, unknown>,
  reserved: Set<string>,
): Record<string, unknown> {
  const own = Object.fromEntries(
    Object.entries(params).filter(([k]) => !NOT_FOR_TOOL.has(k) && !reserved.has(k) && !k.startsWith('__')),
  );
  const fixed = config.fixed_params;
  if (!fixed || typeof fixed !== 'object') return own;
  if (typeof config.params_key === 'string') return { ...fixed, [config.params_key]: own };
  const kept = Object.fromEntries(Object.entries(own).filter(([k]) => !(k in fixed)));
  return { ...kept, ...fixed };
}

export interface PreparedRun {
  primitive: PrimitiveId;
  config: Record<string, unknown>;
  env: Record<string, string>;
  contributions: EnvContribution[];
  passthrough: Record<string, unknown>;
  /** What the run should tell the caller (e.g. `.env` entries that were refused). */
  warnings: string[];
  /** The caller shortened the timeout: the call does not go to a shared warm worker. */
  callerTimeout?: boolean;
}

/**
 * The parameter names a tool declares: the properties of its schema (`CONFIG_SCHEMA`,
 * `config_schema`, `input_schema`) and its YAML `parameters` (a list of `{name}` or a mapping).
 * Only these may fill `{name}` placeholders in the chain's config (DECISIONS 30).
 */
export function declaredParameters(tool: ChainElement): Set<string> {
  const names = new Set<string>();
  const properties = tool.metadata.configSchema?.properties;
  if (properties && typeof properties === 'object')
    for (const name of Object.keys(properties)) names.add(name);
  const parameters = tool.metadata.fields.parameters;
  if (Array.isArray(parameters)) {
    for (const entry of parameters) {
      const name = (entry as { name?: unknown } | null)?.name;
      if (typeof name === 'string') names.add(name);
    }
  } else if (parameters && typeof parameters === 'object') {
    for (const name of Object.keys(parameters)) names.add(name);
  }
  return names;
}

/**
 * The caller's say over how the run goes. A caller may shorten the timeout (lengthen it only when
 * the tool declares `timeout`) and pick the HTTP read mode; everything else in the config is the
 * signed item's own and never replaced by a caller value (DECISIONS 30).
 */
function callerTuning(
  params: Record<string, unknown>,
  config: Record<string, unknown>,
  declared: Set<string>,
): Record<string, unknown> {
  const tuning: Record<string, unknown> = {};
  const timeout = seconds(params.timeout, Number.NaN);
  if (Number.isFinite(timeout)) {
    const own = seconds(config.timeout, Number.POSITIVE_INFINITY);
    tuning.timeout = declared.has('timeout') ? timeout : Math.min(timeout, own);
  }
  if (params.mode === 'sync' || params.mode === 'stream') tuning.mode = params.mode;
  return tuning;
}

/** Merges configs (primitive first, tool last), caller parameters, env and both template passes. */
export async function prepareRun(
  chain: ChainElement[],
  params: Record<string, unknown>,
  anchor: AnchorState,
  context: RunContext,
): Promise<PreparedRun> {
  const { env, expand, trusted, hostCredential, signedNames, contributions, warnings } =
    await chainEnvironment(chain, anchor, context);
  let config: Record<string, unknown> = {};
  // `${VAR}` per element: a project element may use the project's .env, others never.
  for (const element of [...chain].reverse()) {
    const own = element.metadata.config ?? {};
    const fromProject = element.space.name === 'project' && !hostCredential;
    Object.assign(config, expandEnvInConfig(own, fromProject ? expand : trusted));
  }
  const declared = declaredParameters(chain[0]!);
  const reserved = reservedParameters(chain);
  const passthrough: Record<string, unknown> = {};
  const placeholders: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (key.startsWith('__')) passthrough[key] = value;
    else if (declared.has(key) && !IDENTITY_KEYS.has(key) && !reserved.has(key)) placeholders[key] = value;
  }
  const toolParams = paramsForTool(params, config, reserved);
  // A warm worker's working directory is part of what it is: a caller's cwd would start a new
  // worker per value, so function-style runtimes run in the anchor folder or the project.
  const warm = isPlainObject(config.worker);
  const cwd = anchor.cwd ?? (warm ? context.projectPath : confinedCwd(params.cwd, context.projectPath));
  // A `{name}` in the item's url that nothing fills is the caller's missing parameter. Checked on
  // the template itself: braces inside substituted values are data, not placeholders.
  if (typeof config.url === 'string') {
    for (const [, name] of config.url.matchAll(/\{(\w+)\}/g)) {
      const known = [anchor.vars, placeholders, config].some((source) => Object.hasOwn(source, name!));
      if (!known && name !== 'params' && name !== 'params_json') {
        const undeclared = Object.hasOwn(params, name!) && !declared.has(name!);
        throw new RyeError('VALIDATION', `Missing URL parameter '${name}' for ${config.url}`, {
          hint: undeclared
            ? `'${name}' was passed but the tool does not declare it as a parameter: declare it in the tool's schema (CONFIG_SCHEMA / parameters) and re-sign.`
            : `Pass '${name}' in parameters.`,
        });
      }
    }
  }
  const bodyParams = Object.fromEntries(Object.entries(toolParams).filter(([k]) => !HTTP_RESERVED.has(k)));
  const fixed = { ...anchor.vars, params: bodyParams, params_json: JSON.stringify(toolParams) };
  const template = config;
  if (typeof template.url === 'string')
    refuseCallerValuesInUrlHost(template.url, { fixed, params: placeholders, config: template });
  config = renderPlaceholders(template, { fixed, params: placeholders });
  // In the url a caller's value is one path segment (or query value): `../x?` cannot move the
  // request, and the credentials it carries, to another path of the host.
  if (typeof template.url === 'string')
    config.url = renderPlaceholders(template, { fixed, params: urlSegments(placeholders) }).url;
  const tuning = callerTuning(params, config, declared);
  // A caller's shorter timeout must not stop a warm worker other callers' calls are running on:
  // such a call runs alone, one-shot (its own process tree is what the timeout kills).
  const ownTimeout = seconds(config.timeout, 300);
  const shortened = typeof tuning.timeout === 'number' && tuning.timeout < ownTimeout;
  // A warm worker outlives this call: it never holds a provider or collector key its tool did not ask for.
  const runEnv = warm ? withoutWithheld(env, signedNames, WARM_WORKER_WITHHELD) : env;
  config = { ...config, ...tuning, cwd, env: runEnv };
  if (config.body && typeof config.body === 'object' && !Array.isArray(config.body)) {
    config.body = Object.fromEntries(
      Object.entries(config.body as Record<string, unknown>).filter(
        ([, v]) => !(typeof v === 'string' && /^\{\w+\}$/.test(v)),
      ),
    );
  }
  return {
    primitive: chain.at(-1)!.id as PrimitiveId,
    config,
    env: runEnv,
    contributions,
    passthrough,
    warnings,
    ...(shortened ? { callerTimeout: true } : {}),
  };
}

/**
 * Whether a run may carry a value from the host's environment: a `${VAR}` the host sets anywhere
 * in its chain's config or env_config `env` (an HTTP request's auth, headers, query, body or a
 * key those name as `{key}`; a subprocess's command line or environment). Then where it goes (a
 * url, the command's other arguments or variables) must come from signed files and the host too,
 * never from the project's `.env`.
 * ryeos's own settings (where it is, which interpreter) are paths, not credentials.
 */
function carriesHostCredential(chain: readonly ChainElement[], hostEnv: RunContext['hostEnv']): boolean {
  const settings = new Set(RYEOS_SETTINGS);
  for (const element of chain) {
    const interpreter = (element.metadata.envConfig as EnvConfig | undefined)?.interpreter?.var;
    if (interpreter) settings.add(interpreter);
  }
  for (const element of chain) {
    const envConfig = (element.metadata.envConfig as EnvConfig | undefined)?.env;
    const text = JSON.stringify([element.metadata.config ?? null, envConfig ?? null]);
    for (const [, name] of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g))
      if (!settings.has(name!) && hostEnv[name!] !== undefined && hostEnv[name!] !== '') return true;
  }
  return false;
}

/** Variables that locate ryeos and its interpreters (see `chainEnvironment`), never a secret. */
const RYEOS_SETTINGS = [
  'RYE_SYSTEM_SPACE',
  'RYE_PROJECT_PATH',
  'USER_SPACE',
  'RYE_SNAPSHOT_FALLBACK',
  'RYE_KERNEL_NODE',
  'RYE_NODE',
  'RYE_PYTHON',
  'RYE_BASH',
];

/** Caller values as URL components: percent-encoded, and never a dot segment (which URLs resolve). */
function urlSegments(placeholders: Record<string, unknown>): Record<string, string> {
  const encoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(placeholders)) {
    if (value === undefined) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (text === '.' || text === '..') {
      throw new RyeError('VALIDATION', `Parameter '${name}' cannot be '${text}' in a URL`, {
        hint: `'${name}' fills one segment of the tool's URL: pass a name, not a relative path.`,
      });
    }
    encoded[name] = encodeURIComponent(text);
  }
  return encoded;
}

function seconds(value: unknown, fallback: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Subprocess output → `{success, data, error}` (spec §4.7). */
export function normalizeProcessResult(stdout: string, stderr: string, exitCode: number) {
  const trimmed = stdout.trim();
  let parsed: unknown;
  let isJson = false;
  if (trimmed) {
    try {
      parsed = JSON.parse(trimmed);
      isJson = true;
    } catch {
      isJson = false;
    }
  }
  if (isJson && parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const data = parsed as Record<string, unknown>;
    const success = exitCode === 0 && data.success !== false;
    let error: string | undefined;
    if (exitCode !== 0 && stderr.trim()) error = stderr.trim();
    else if (!success)
      error = String(data.error || data.stderr || (exitCode !== 0 ? `exit code ${exitCode}` : ''));
    return { success, data: parsed, ...(error !== undefined ? { error } : {}) };
  }
  if (isJson) {
    const success = exitCode === 0;
    return { success, data: parsed, ...(success ? {} : { error: stderr.trim() || `exit code ${exitCode}` }) };
  }
  const success = exitCode === 0;
  return {
    success,
    data: { stdout, stderr, exit_code: exitCode },
    ...(success ? {} : { error: stderr.trim() || `Process exited with code ${exitCode}` }),
  };
}

/**
 * A runtime's `worker:` block (function-style runtimes): its calls go to a warm worker instead of
 * a new process each (lillux `runWarm`). `RYE_WARM_WORKERS=0` in the host's environment turns
 * warm workers off: each call then starts the worker script as a one-shot process.
 */
function workerSettings(value: unknown, context: RunContext): WorkerSettings | undefined {
  const hostEnv = context.hostEnv;
  if (!isPlainObject(value) || hostEnv.RYE_WARM_WORKERS === '0') return undefined;
  const idle = seconds(value.idle_timeout, Number.NaN);
  const concurrency = Number(value.max_concurrency);
  return {
    ...(Number.isFinite(idle) ? { idleMs: idle * 1000 } : {}),
    ...(Number.isInteger(concurrency) && concurrency > 0 ? { maxConcurrency: concurrency } : {}),
    // A thread of the host only when the host asked (a one-shot CLI), whatever an item's config
    // says: a thread shares the host's fd 1 and working directory (SECURITY.md, warm workers).
    thread: context.workerThread === true,
    // The worker signs its answers (a node worker, which another process of the user can reach).
    ...(value.signed_answers === true ? { signedAnswers: true } : {}),
  };
}

function commandLine(config: Record<string, unknown>): { command: string; args: string[] } {
  const command = typeof config.command === 'string' ? config.command : '';
  const args = Array.isArray(config.args)
    ? config.args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))
    : [];
  return { command, args };
}

/**
 * Starts the warm worker a call of this prepared run would use, without running a call; false
 * when the run has no worker (an HTTP tool, a plain subprocess, warm workers turned off).
 */
export function warmPrimitive(prepared: PreparedRun, context: RunContext): boolean {
  const options = warmCallOptions(prepared, context);
  if (!options) return false;
  ensureBytecodeCache(prepared.env);
  return startWarm(options);
}

/** The worker a call of this prepared run would use; undefined when it has none. */
export function warmCallOptions(prepared: PreparedRun, context: RunContext): WarmCallOptions | undefined {
  const { config } = prepared;
  if (prepared.primitive === 'rye/core/primitives/http_client') return undefined;
  const worker = prepared.callerTimeout ? undefined : workerSettings(config.worker, context);
  if (!worker) return undefined;
  return {
    ...commandLine(config),
    cwd: String(config.cwd),
    env: prepared.env,
    worker,
    ...(context.confine ? { confine: context.confine } : {}),
  };
}

async function runProcess(prepared: PreparedRun, context: RunContext): Promise<RunOutcome> {
  const { config } = prepared;
  ensureBytecodeCache(prepared.env);
  const { command, args } = commandLine(config);
  const input =
    config.input_data === undefined || config.input_data === '' ? undefined : String(config.input_data);
  const cap = outputCap(config);
  const options = {
    command,
    args,
    cwd: String(config.cwd),
    env: prepared.env,
    maxOutputBytes: cap,
    ...(input !== undefined ? { input } : {}),
    timeoutMs: seconds(config.timeout, 300) * 1000,
    ...(context.confine ? { confine: context.confine } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
    ...(context.onOutput
      ? {
          onStdout: (c: string) => context.onOutput?.(c, 'stdout'),
          onStderr: (c: string) => context.onOutput?.(c, 'stderr'),
        }
      : {}),
  };
  const worker = prepared.callerTimeout ? undefined : workerSettings(config.worker, context);
  // A process of its own run by a thread (a state graph) acts within that thread's grant; warm
  // workers are shared across callers, and a thread never hands them its id.
  const result = worker
    ? await runWarm({ ...options, worker })
    : await runSubprocess({
        ...options,
        ...(context.parentThreadId
          ? { env: { ...options.env, RYE_PARENT_THREAD_ID: context.parentThreadId } }
          : {}),
        envMode: 'replace',
      });
  if (result.error && result.exit_code === -1 && !result.timed_out) {
    return {
      success: false,
      data: { stdout: result.stdout, stderr: result.stderr, exit_code: -1 },
      error: result.error,
    };
  }
  if (result.truncated) {
    // Cut output is never parsed as the tool's JSON result: it is returned as text, with a note.
    const warnings = Object.entries(result.truncated).map(([stream, total]) =>
      truncationNote(`Tool ${stream}`, total!, cap),
    );
    const success = result.exit_code === 0 && !result.timed_out;
    return {
      success,
      data: {
        stdout: result.stdout,
        stderr: result.stderr,
        exit_code: result.exit_code,
        truncated: result.truncated,
      },
      warnings,
      ...(success
        ? {}
        : {
            error: result.timed_out
              ? `Timed out after ${seconds(config.timeout, 300)} seconds (the process tree was killed)`
              : result.stderr.trim() || `Process exited with code ${result.exit_code}`,
          }),
      ...(result.timed_out ? { timedOut: true } : {}),
    };
  }
  const normalized = normalizeProcessResult(result.stdout, result.stderr, result.exit_code);
  if (result.timed_out) {
    return {
      ...normalized,
      success: false,
      timedOut: true,
      error: `Timed out after ${seconds(config.timeout, 300)} seconds (the process tree was killed)`,
    };
  }
  return normalized;
}

interface AuthConfig {
  type?: string;
  token?: string;
  key?: string;
  header?: string;
}

async function runHttp(prepared: PreparedRun, context: RunContext): Promise<RunOutcome> {
  const { config } = prepared;
  // `${VAR}` in the item's own config was expanded in prepareRun; caller values are never expanded.
  const url = typeof config.url === 'string' ? config.url : '';
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries((config.headers as Record<string, unknown>) ?? {}))
    headers[k] = String(v);
  const auth = config.auth as AuthConfig | undefined;
  if (auth?.type === 'bearer' && auth.token) headers.Authorization = `Bearer ${auth.token}`;
  if (auth?.type === 'api_key' && auth.key) headers[auth.header ?? 'X-API-Key'] = auth.key;
  const method = (typeof config.method === 'string' ? config.method.toUpperCase() : 'GET') as HttpMethod;
  const retry = (config.retry as { max_attempts?: number; backoff?: 'exponential' | 'linear' }) ?? {};
  const body = config.body;
  const emptyObject =
    body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0;
  // A body is sent only for POST/PUT/PATCH and only when it has something in it (spec §5.2).
  const hasBody =
    ['POST', 'PUT', 'PATCH'].includes(method) && body !== undefined && body !== '' && !emptyObject;
  const cap = outputCap(config);
  const request = {
    url,
    method,
    headers,
    maxBodyBytes: cap,
    ...(hasBody ? { body: config.body } : {}),
    timeoutMs: seconds(config.timeout, 30) * 1000,
    retries: Math.max(0, (retry.max_attempts ?? 1) - 1),
    ...(retry.backoff ? { backoff: retry.backoff } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
  };
  const mode = config.mode ?? 'sync';
  if (mode === 'stream') {
    const sinks = (prepared.passthrough.__sinks as EventSink[] | undefined) ?? [];
    const result = await httpStream({ ...request, sinks });
    const data = { status_code: result.status, body: result.events, headers: result.headers };
    return {
      success: result.success,
      data,
      ...(result.error ? { error: result.error } : {}),
    };
  }
  if (mode !== 'sync')
    throw new RyeError('VALIDATION', `Unknown mode: ${String(mode)}. Must be 'sync' or 'stream'`);
  const result = await httpRequest(request);
  const data = { status_code: result.status, body: result.json ?? result.body, headers: result.headers };
  return {
    success: result.success,
    data: result.truncated ? { ...data, truncated: true } : data,
    ...(result.error ? { error: result.error } : {}),
    ...(result.truncated ? { warnings: [truncationNote('The response body', undefined, cap)] } : {}),
  };
}

interface PrimitiveRunner {
  run(prepared: PreparedRun, context: RunContext): Promise<RunOutcome>;
  /** Whether it hands files to an interpreter, which then runs from the verified snapshot. */
  runsFiles: boolean;
}

/** What each primitive does with a prepared run: the one place primitives are told apart. */
export const PRIMITIVE_RUNNERS: Readonly<Record<PrimitiveId, PrimitiveRunner>> = {
  'rye/core/primitives/subprocess': { run: runProcess, runsFiles: true },
  'rye/core/primitives/http_client': { run: runHttp, runsFiles: false },
};

export function runPrimitive(prepared: PreparedRun, context: RunContext): Promise<RunOutcome> {
  return PRIMITIVE_RUNNERS[prepared.primitive].run(prepared, context);
}
