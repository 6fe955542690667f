#!/usr/bin/env node
// rye:signed:2026-11-28T23:35:01Z:22f2ee35fa3349bd9019f480acd208fc9b8dc9dd2a528728e46ea1fd268d1ced:0pUH9H_kTQ5HQOkNTT1eKDA119x0w8fSk98gtzPGzUmFsAN8dXSE60CHk1og3Fl_imNQT6hwN5_oIXOdt0_7Cg==:007af625371e6e71
/**
 * rye/mcp/connect — the MCP client of RYE OS: calls one tool of an external MCP server (or lists
 * its tools) with the official MCP SDK client, over stdio or Streamable HTTP.
 *
 * Three ways in:
 *  - the runtimes rye/core/runtimes/mcp/{stdio,http} (generated `tool_type: mcp` items):
 *      node connect.js --server-config <path> --tool <name> --project-path <dir> [--user-space <dir>]
 *    with the remote tool's arguments as one JSON object on stdin;
 *  - directly from a shell, the same flags, or `--list` instead of `--tool`;
 *  - as a RYE tool (`execute tool:rye/mcp/connect`) through the node runtime: stdin carries
 *    {server_config | connection, tool, params, list}.
 *
 * Prints exactly one JSON object on stdout: {success, content, structuredContent?, isError?} for a
 * call, {success, server, tools, count} for a list, {success: false, error} on failure (exit 1).
 * Nothing else is written to stdout or stderr (the server's stderr is kept for error messages and
 * forwarded only with RYE_DEBUG=1).
 *
 * A server config is a YAML item (`tool_type: mcp_server`, `executor_id: null`) with the
 * connection fields at the top level or under `config:` — `transport: stdio|http`, then
 * `command`, `args`, `env`, `cwd` (stdio) or `url`, `headers` (http), and `timeout` (seconds, per
 * request, default 30). `${VAR}` / `${VAR:-default}` in those fields expand from the process env,
 * `.env.local`, `.env`, the project's and the user's `.ai/.env`. Its real path must lie inside
 * `.ai/tools/` of the project, the user space or a system bundle (where the executor verifies it).
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "rye/mcp";
export const __tool_description__ = "Call a tool of an external MCP server (stdio or Streamable HTTP), or list its tools";
export const CONFIG_SCHEMA = {
  type: "object",
  properties: {
    server_config: {
      type: "string",
      description: "Server config item: an id such as acme/servers/docs, or a path to its YAML inside the project or a space's .ai",
    },
    connection: {
      type: "object",
      description: "Instead of server_config: {transport: stdio|http, command, args, env, cwd, url, headers, timeout}",
    },
    tool: { type: "string", description: "Name of the remote tool to call; omit (or set list) to list the server's tools" },
    params: { type: "object", description: "Arguments of the remote tool" },
    list: { type: "boolean", description: "List the server's tools instead of calling one" },
  },
};

const DEFAULT_TIMEOUT_SECONDS = 30;
const STDERR_TAIL = 4000;

/** A failure with a message meant for the caller (printed as {success: false, error}). */
export class McpClientError extends Error {
  constructor(message, extra = {}) {
    super(message);
    this.extra = extra;
  }
}

// ---------------------------------------------------------------------------------------------
// Spaces and paths

const isRyeosPackage = (dir) => {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'ryeos';
  } catch {
    return false;
  }
};

/**
 * The ryeos package root (the system space): the one the executor names in RYE_SYSTEM_SPACE (we
 * may run from a snapshot of our verified bytes, far from the package), else the nearest
 * package.json named "ryeos" above us.
 */
export function ryeosRoot() {
  const named = process.env.RYE_SYSTEM_SPACE;
  if (named && isAbsolute(named) && isRyeosPackage(named)) return named;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'ryeos') return dir;
    } catch {
      // no package.json here
    }
    const parent = dirname(dir);
    if (parent === dir) throw new McpClientError('Cannot locate the ryeos package above rye/mcp/connect.js');
    dir = parent;
  }
}

/** Roots of the system bundles: ryeos itself, then bundles registered in user config. */
async function systemRoots(userSpace) {
  const roots = [ryeosRoot()];
  const file = join(userSpace, '.ai', 'config', 'bundles.yaml');
  if (!existsSync(file)) return roots;
  try {
    const { parse } = await import('yaml');
    const data = parse(readFileSync(file, 'utf8'));
    for (const bundle of data?.bundles ?? []) {
      if (typeof bundle?.path === 'string') roots.push(resolve(userSpace, bundle.path));
    }
  } catch {
    // an unreadable bundles.yaml adds no roots
  }
  return roots;
}

function realOrNull(path) {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function inside(child, parent) {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves a server config path (relative paths are relative to the project) and refuses one
 * that is outside `.ai/tools/` of the project, the user space or a system bundle — as written
 * and once symlinks are resolved. There the executor verifies the file's signature before a
 * runtime starts this client: it checks every argument that contains `/.ai/tools/`, so the path
 * as given must contain it too (no `..` or symlink detour around the check).
 */
export async function checkServerConfigPath(path, ctx) {
  // A runtime hands us the server config inside the run's snapshot: the executor verified it.
  if (inRunSnapshot(path)) return realpathSync(path);
  const given = isAbsolute(path) ? path : `${ctx.projectPath}/${path}`;
  const absolute = resolve(given);
  if (!statSync(absolute, { throwIfNoEntry: false })?.isFile()) {
    throw new McpClientError(`MCP server config not found: ${absolute}`);
  }
  const real = realpathSync(absolute);
  const roots = [join(ctx.projectPath, '.ai', 'tools'), join(ctx.userSpace, '.ai', 'tools')];
  for (const root of await systemRoots(ctx.userSpace)) roots.push(join(root, '.ai', 'tools'));
  const lexical = roots.some((root) => inside(absolute, resolve(root)));
  const resolved = roots.some((root) => {
    const realRoot = realOrNull(root);
    return realRoot !== null && inside(real, realRoot);
  });
  const marked = given.replaceAll('\\', '/').includes('/.ai/tools/');
  if (lexical && resolved && marked) return real;
  throw new McpClientError(
    `Refusing MCP server config ${absolute}: server configs must lie in .ai/tools/ of the project (${ctx.projectPath}), the user space (${ctx.userSpace}) or a system bundle`,
  );
}

/**
 * Whether a path lies in the snapshot of verified files the executor made for this run
 * (RYE_SNAPSHOT_DIR, set by the executor and never by a project's .env).
 */
export function inRunSnapshot(path) {
  const dir = process.env.RYE_SNAPSHOT_DIR;
  if (!dir || !isAbsolute(dir) || !isAbsolute(path)) return false;
  const real = realOrNull(path);
  const realDir = realOrNull(dir);
  return real !== null && realDir !== null && inside(real, realDir) && statSync(real).isFile();
}

/**
 * The original path of a file in the run's snapshot (RYE_SNAPSHOT_SOURCES pairs snapshot roots
 * with space roots), e.g. to tell which space a server config came from; other paths unchanged.
 */
export function originalPath(path) {
  if (!inRunSnapshot(path)) return path;
  const real = realpathSync(path);
  let pairs = [];
  try {
    pairs = JSON.parse(process.env.RYE_SNAPSHOT_SOURCES ?? '[]');
  } catch {
    // no sources: keep the snapshot path
  }
  for (const [copy, base] of Array.isArray(pairs) ? pairs : []) {
    if (typeof copy === 'string' && typeof base === 'string' && inside(real, copy)) {
      return join(base, relative(copy, real));
    }
  }
  return path;
}

/**
 * Verifies a server config's signature like any item (a server config says what command runs).
 * Needed when a config is named by parameters; configs a runtime passes on the command line were
 * verified by the executor before this process started.
 */
export async function verifyServerConfig(path, ctx) {
  const entry = pathToFileURL(join(ryeosRoot(), 'dist', 'index.js')).href;
  const { createRye } = await import(entry);
  const executor = await createRye({ projectPath: ctx.projectPath, userSpace: ctx.userSpace }).executor();
  try {
    await executor.verifyToolFile(path);
  } catch (error) {
    throw new McpClientError(error instanceof Error ? error.message : String(error));
  }
}

const SPACE_TEMPLATES = { project: '{project_path}', user: '{user_space}', system: '{system_space}' };

/**
 * Finds a server config item by id (e.g. acme/servers/docs): project, then user, then system
 * space, as `.ai/tools/<id>.yaml` or `.yml`. Returns {path, space, template}; template is the path
 * written with the space's placeholder, as generated tool items store it.
 */
export async function resolveServerId(id, ctx) {
  if (
    typeof id !== 'string' ||
    !id ||
    id.startsWith('/') ||
    id.includes('\\') ||
    id.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
  ) {
    throw new McpClientError(`Invalid server config id '${id}': use a slash-separated item id such as acme/servers/docs`);
  }
  const bases = [
    ['project', ctx.projectPath],
    ['user', ctx.userSpace],
    ...(await systemRoots(ctx.userSpace)).map((root, i) => ['system', root, i]),
  ];
  for (const [space, base, index] of bases) {
    for (const ext of ['.yaml', '.yml']) {
      const path = join(base, '.ai', 'tools', `${id}${ext}`);
      if (statSync(path, { throwIfNoEntry: false })?.isFile()) {
        // Only the first system bundle has a placeholder ({system_space}); others are absolute.
        const prefix = space === 'system' && index !== 0 ? base : SPACE_TEMPLATES[space];
        return { path, space, template: `${prefix}/.ai/tools/${id}${ext}` };
      }
    }
  }
  throw new McpClientError(
    `MCP server config '${id}' not found: looked for .ai/tools/${id}.yaml in the project, user and system spaces`,
  );
}

// ---------------------------------------------------------------------------------------------
// Environment templates

function parseDotenv(file) {
  const vars = {};
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return vars;
  }
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('export ')) line = line.slice(7).trim();
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) {
      value = value.slice(1, -1);
    }
    vars[key] = value;
  }
  return vars;
}

/**
 * Variables for `${VAR}` in a server config, by where the config comes from (DECISIONS 30):
 *  - 'project': user .ai/.env < project .ai/.env < .env < .env.local < process env;
 *  - 'trusted' (a user or system config): user .ai/.env < process env, minus what the process
 *    env only holds because a project's .env put it there (a project tool's run carries it);
 *  - 'caller' (connection fields a caller passed): none — caller values are data, never expanded.
 */
export function templateVariables(ctx, scope = 'project') {
  if (scope === 'caller') return null;
  const projectFiles = [
    join(ctx.projectPath, '.ai', '.env'),
    join(ctx.projectPath, '.env'),
    join(ctx.projectPath, '.env.local'),
  ].map(parseDotenv);
  const vars = { ...parseDotenv(join(ctx.userSpace, '.ai', '.env')) };
  if (scope === 'project') Object.assign(vars, ...projectFiles);
  const fromProject = scope === 'project' ? {} : Object.assign({}, ...projectFiles);
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || (key in fromProject && fromProject[key] === value)) continue;
    vars[key] = value;
  }
  return vars;
}

/**
 * The variables a project config expands from. When any of its fields (url, headers, command,
 * args, env, cwd) sends a value of yours (from the process env or your user .ai/.env), none of it
 * expands from the project's files: a repository adding API_BASE or MCP_BIN to its .env would
 * otherwise choose where your token goes, or which program gets it.
 */
function configVariables(fields, vars, ctx, scope) {
  if (scope !== 'project') return vars;
  const trusted = templateVariables(ctx, 'trusted');
  const text = JSON.stringify([fields.url, fields.headers, fields.command, fields.args, fields.env, fields.cwd]);
  for (const [, name] of text.matchAll(ENV_NAME)) {
    if (trusted[name] !== undefined && trusted[name] !== '') return trusted;
  }
  return vars;
}

/** Which variables a server config at `path` may use: its space decides (see templateVariables). */
export function configScope(path, ctx) {
  const real = realOrNull(originalPath(path)) ?? originalPath(path);
  const projectTools = realOrNull(join(ctx.projectPath, '.ai', 'tools'));
  return projectTools !== null && inside(real, projectTools) ? 'project' : 'trusted';
}

const ENV_TEMPLATE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
// Every name a template uses, those in a default (`${A:-${B}}`) included.
const ENV_NAME = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;

function expand(value, vars, missing) {
  if (typeof value !== 'string' || vars === null) return value;
  return value.replace(ENV_TEMPLATE, (_match, name, fallback) => {
    if (vars[name] !== undefined && vars[name] !== '') return vars[name];
    if (fallback !== undefined) return fallback;
    missing.add(name);
    return '';
  });
}

// ---------------------------------------------------------------------------------------------
// Server configs

/** Reads a server config YAML into its connection fields (top level, overlaid by `config:`). */
export async function readServerConfig(path) {
  const { parse } = await import('yaml');
  let data;
  try {
    data = parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new McpClientError(`Cannot read MCP server config ${path}: ${error.message}`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new McpClientError(`MCP server config ${path} is not a YAML mapping`);
  }
  if (data.tool_type !== undefined && data.tool_type !== 'mcp_server') {
    throw new McpClientError(`${path} is not an MCP server config (tool_type is '${data.tool_type}', expected mcp_server)`);
  }
  const nested = data.config && typeof data.config === 'object' && !Array.isArray(data.config) ? data.config : {};
  const fields = {};
  for (const key of ['transport', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'timeout', 'name']) {
    if (data[key] !== undefined) fields[key] = data[key];
    if (nested[key] !== undefined) fields[key] = nested[key];
  }
  fields.name ??= basename(path, extname(path));
  return fields;
}

/**
 * Validates connection fields and expands their `${VAR}` templates. Returns
 * {name, transport, command, args, env, cwd, url, headers, timeoutMs, missingVars}.
 */
export function normalizeConnection(fields, ctx, scope = 'caller') {
  const name = typeof fields.name === 'string' && fields.name ? fields.name : 'server';
  const transport = fields.transport ?? (fields.url ? 'http' : fields.command ? 'stdio' : undefined);
  const vars = configVariables(fields, templateVariables(ctx, scope), ctx, scope);
  const missing = new Set();
  const timeoutSeconds = Number(fields.timeout);
  const conn = {
    name,
    transport,
    // What messages show: the fields as written, never with ${VAR} values (they may be secrets).
    shown: {
      command: typeof fields.command === 'string' ? fields.command : '',
      args: Array.isArray(fields.args) ? fields.args.map(String) : [],
      url: typeof fields.url === 'string' ? fields.url : '',
    },
    timeoutMs: (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0 ? timeoutSeconds : DEFAULT_TIMEOUT_SECONDS) * 1000,
  };
  if (transport === 'stdio') {
    if (typeof fields.command !== 'string' || !fields.command) {
      throw new McpClientError(`MCP server '${name}': a stdio server needs a command`);
    }
    if (fields.args !== undefined && !Array.isArray(fields.args)) {
      throw new McpClientError(`MCP server '${name}': args must be a list`);
    }
    if (fields.env !== undefined && (typeof fields.env !== 'object' || fields.env === null || Array.isArray(fields.env))) {
      throw new McpClientError(`MCP server '${name}': env must be a mapping`);
    }
    conn.command = expand(fields.command, vars, missing);
    conn.args = (fields.args ?? []).map((arg) => expand(String(arg), vars, missing));
    conn.env = Object.fromEntries(
      Object.entries(fields.env ?? {}).map(([key, value]) => [key, expand(String(value ?? ''), vars, missing)]),
    );
    const cwd = typeof fields.cwd === 'string' && fields.cwd ? expand(fields.cwd, vars, missing) : ctx.projectPath;
    conn.cwd = isAbsolute(cwd) ? cwd : resolve(ctx.projectPath, cwd);
  } else if (transport === 'http' || transport === 'streamable-http' || transport === 'streamable_http') {
    conn.transport = 'http';
    if (typeof fields.url !== 'string' || !fields.url) {
      throw new McpClientError(`MCP server '${name}': an http server needs a url`);
    }
    conn.url = expand(fields.url, vars, missing);
    try {
      new URL(conn.url);
    } catch {
      throw new McpClientError(`MCP server '${name}': invalid url '${fields.url}'`);
    }
    if (fields.headers !== undefined && (typeof fields.headers !== 'object' || fields.headers === null || Array.isArray(fields.headers))) {
      throw new McpClientError(`MCP server '${name}': headers must be a mapping`);
    }
    conn.headers = Object.fromEntries(
      Object.entries(fields.headers ?? {}).map(([key, value]) => [key, expand(String(value ?? ''), vars, missing)]),
    );
  } else if (transport === 'sse') {
    throw new McpClientError(
      `MCP server '${name}': the legacy HTTP+SSE transport is not supported; use transport: http (Streamable HTTP)`,
    );
  } else {
    throw new McpClientError(
      `MCP server '${name}': unknown transport '${transport ?? ''}' (expected stdio with a command, or http with a url)`,
    );
  }
  conn.missingVars = [...missing];
  return conn;
}

// ---------------------------------------------------------------------------------------------
// The client

async function loadSdk() {
  try {
    const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    return { Client, StdioClientTransport, StreamableHTTPClientTransport };
  } catch (error) {
    throw new McpClientError(
      `The MCP SDK (@modelcontextprotocol/sdk) cannot be loaded next to ryeos: ${error.message}`,
    );
  }
}

function isTimeout(error) {
  return error?.code === -32001 || /timed out/i.test(String(error?.message));
}

function rootCause(error) {
  let cause = error;
  while (cause?.cause) cause = cause.cause;
  return cause;
}

/** Turns a connection failure into a message that says what went wrong and where. */
function connectFailure(error, conn, stderrTail, phase) {
  const notes = [];
  const tail = stderrTail().trim();
  if (tail) notes.push(`Server stderr: ${tail}`);
  if (conn.missingVars?.length) notes.push(`Unset variables in the server config: ${conn.missingVars.join(', ')}`);
  const suffix = notes.length ? `\n${notes.join('\n')}` : '';
  const seconds = conn.timeoutMs / 1000;
  if (conn.transport === 'stdio') {
    const cause = rootCause(error);
    if (cause?.code === 'ENOENT') {
      return new McpClientError(
        `MCP server '${conn.name}' failed to start: command not found: ${conn.shown.command}${suffix}`,
      );
    }
    if (cause?.code === 'EACCES') {
      return new McpClientError(`MCP server '${conn.name}' failed to start: permission denied: ${conn.shown.command}${suffix}`);
    }
    if (isTimeout(error)) {
      return new McpClientError(
        `MCP server '${conn.name}' started but did not complete the MCP handshake within ${seconds} s (${conn.shown.command})${suffix}`,
      );
    }
    return new McpClientError(
      `MCP server '${conn.name}' failed to start: ${phase === 'connect' ? 'the process ended before completing the MCP handshake' : error.message} (${[conn.shown.command, ...conn.shown.args].join(' ')})${suffix}`,
    );
  }
  if (isTimeout(error)) {
    return new McpClientError(`MCP server '${conn.name}' at ${conn.shown.url} did not answer within ${seconds} s${suffix}`);
  }
  if (typeof error?.code === 'number' && error.code >= 400 && error.code < 600) {
    return new McpClientError(
      `MCP server '${conn.name}' at ${conn.shown.url} answered HTTP ${error.code}: ${error.message}${suffix}`,
    );
  }
  const cause = rootCause(error);
  const reason =
    cause?.code === 'ECONNREFUSED'
      ? 'connection refused'
      : cause && cause !== error && cause.message
        ? `${error.message} (${cause.message})`
        : error.message;
  return new McpClientError(`Cannot reach MCP server '${conn.name}' at ${conn.shown.url}: ${reason}${suffix}`);
}

/**
 * Connects to a server. Returns {client, conn, close(), stderrTail()}; throws McpClientError with
 * a clear message when the server cannot be started or reached.
 */
export async function openClient(conn) {
  const sdk = await loadSdk();
  let tail = '';
  const stderrTail = () => tail;
  let transport;
  if (conn.transport === 'stdio') {
    transport = new sdk.StdioClientTransport({
      command: conn.command,
      args: conn.args,
      env: conn.env,
      cwd: conn.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL);
      if (process.env.RYE_DEBUG === '1') process.stderr.write(chunk);
    });
  } else {
    transport = new sdk.StreamableHTTPClientTransport(new URL(conn.url), {
      requestInit: { headers: conn.headers },
    });
  }
  const client = new sdk.Client({ name: 'ryeos-mcp-connect', version: __version__ });
  // The SDK reports some transport errors only through onerror; keep them quiet.
  client.onerror = () => {};
  try {
    await client.connect(transport, { timeout: conn.timeoutMs });
  } catch (error) {
    await Promise.race([client.close().catch(() => {}), sleep(2000)]);
    throw connectFailure(error, conn, stderrTail, 'connect');
  }
  const close = async () => {
    if (conn.transport === 'http') {
      await Promise.race([transport.terminateSession?.().catch(() => {}), sleep(2000)]);
    }
    await Promise.race([client.close().catch(() => {}), sleep(5000)]);
  };
  return { client, conn, close, stderrTail };
}

function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms).unref());
}

/** Every tool of the server (following pagination): [{name, description, inputSchema}]. */
export async function listTools(session) {
  const { client, conn } = session;
  const tools = [];
  let cursor;
  try {
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: conn.timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
  } catch (error) {
    if (isTimeout(error)) {
      throw new McpClientError(`MCP server '${conn.name}' did not list its tools within ${conn.timeoutMs / 1000} s`);
    }
    throw new McpClientError(`MCP server '${conn.name}' failed to list its tools: ${error.message}`);
  }
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema ?? { type: 'object' },
  }));
}

function contentText(content) {
  return (Array.isArray(content) ? content : [])
    .filter((block) => block?.type === 'text')
    .map((block) => block.text)
    .join('\n')
    .trim();
}

/** Calls one tool; the remote tool must exist (else the error lists the server's tools). */
export async function callTool(session, toolName, params) {
  const { client, conn } = session;
  const tools = await listTools(session);
  if (!tools.some((tool) => tool.name === toolName)) {
    const names = tools.map((tool) => tool.name);
    throw new McpClientError(
      `Tool '${toolName}' not found on MCP server '${conn.name}'. Available tools: ${names.length ? names.join(', ') : '(none)'}`,
      { available_tools: names },
    );
  }
  let result;
  try {
    result = await client.callTool({ name: toolName, arguments: params }, undefined, { timeout: conn.timeoutMs });
  } catch (error) {
    if (isTimeout(error)) {
      throw new McpClientError(
        `MCP tool '${toolName}' on server '${conn.name}' timed out after ${conn.timeoutMs / 1000} s (raise timeout in the server config)`,
      );
    }
    throw new McpClientError(`MCP tool '${toolName}' on server '${conn.name}' failed: ${error.message}`);
  }
  const output = { success: result.isError !== true, content: result.content ?? [] };
  if (result.structuredContent !== undefined) output.structuredContent = result.structuredContent;
  if (result.isError === true) {
    output.isError = true;
    output.error = `MCP tool '${toolName}' on server '${conn.name}' reported an error: ${contentText(result.content) || '(no message)'}`;
  }
  // Servers speaking an old protocol version answer with `toolResult`.
  if (result.content === undefined && result.toolResult !== undefined) output.toolResult = result.toolResult;
  return output;
}

// ---------------------------------------------------------------------------------------------
// Entry point

async function readStdinJson() {
  if (process.stdin.isTTY) return {};
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new McpClientError(`Parameters on stdin are not valid JSON: ${error.message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new McpClientError('Parameters on stdin must be a JSON object');
  }
  return value;
}

const isPlaceholder = (value) => typeof value === 'string' && /^\{\w+\}$/.test(value);

function spaceContext(values) {
  const projectPath = resolve(values['project-path'] ?? process.cwd());
  const rawUser = values['user-space'] && !isPlaceholder(values['user-space']) ? values['user-space'] : process.env.USER_SPACE;
  const userSpace = rawUser ? resolve(rawUser.replace(/^~(?=$|\/)/, homedir())) : homedir();
  return { projectPath, userSpace };
}

/** Where the connection comes from: a server config (id or path) or inline connection fields. */
async function connectionFor(ctx, source) {
  if (source.configPath !== undefined) {
    const path = await checkServerConfigPath(source.configPath, ctx);
    if (!inRunSnapshot(path)) await verifyServerConfig(path, ctx);
    return normalizeConnection(await readServerConfig(path), ctx, configScope(path, ctx));
  }
  if (source.serverId !== undefined) {
    const { path } = await resolveServerId(source.serverId, ctx);
    const checked = await checkServerConfigPath(path, ctx);
    await verifyServerConfig(checked, ctx);
    return normalizeConnection(await readServerConfig(checked), ctx, configScope(checked, ctx));
  }
  return normalizeConnection(source.fields, ctx, 'caller');
}

async function run() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: false,
    options: {
      'server-config': { type: 'string' },
      tool: { type: 'string' },
      list: { type: 'boolean' },
      'project-path': { type: 'string' },
      'user-space': { type: 'string' },
    },
  });
  const ctx = spaceContext(values);
  let source;
  let toolName;
  let params;
  let list;
  if (values['server-config'] !== undefined || values.tool !== undefined || values.list) {
    // Runtime / shell mode: flags name the server and the tool; stdin holds the tool's arguments.
    const configPath = values['server-config'];
    if (typeof configPath !== 'string' || !configPath || isPlaceholder(configPath)) {
      throw new McpClientError(
        'No MCP server config: the tool item must set config.server_config_path (e.g. "{project_path}/.ai/tools/acme/servers/docs.yaml")',
      );
    }
    list = values.list === true;
    toolName = values.tool;
    if (!list && (typeof toolName !== 'string' || !toolName || isPlaceholder(toolName))) {
      throw new McpClientError('No MCP tool name: the tool item must set config.tool_name (or pass --list)');
    }
    source = { configPath };
    params = list ? {} : await readStdinJson();
  } else {
    // Tool mode (execute tool:rye/mcp/connect): everything arrives on stdin.
    const input = await readStdinJson();
    const fields = { ...(input.connection ?? {}) };
    for (const key of ['transport', 'command', 'args', 'url', 'headers']) {
      if (input[key] !== undefined) fields[key] = input[key];
    }
    const ref = input.server_config;
    if (typeof ref === 'string' && ref) {
      const looksLikePath = /\.ya?ml$/.test(ref) || ref.startsWith('.') || isAbsolute(ref);
      source = looksLikePath ? { configPath: ref } : { serverId: ref };
    } else if (Object.keys(fields).length) {
      source = { fields };
    } else {
      throw new McpClientError(
        'Name the server: server_config (an id such as acme/servers/docs, or a path), or connection {transport, command|url, …}',
      );
    }
    toolName = typeof input.tool === 'string' && input.tool ? input.tool : undefined;
    list = input.list === true || toolName === undefined;
    params = input.params && typeof input.params === 'object' ? input.params : {};
  }
  const conn = await connectionFor(ctx, source);
  const session = await openClient(conn);
  try {
    if (list) {
      const tools = await listTools(session);
      return { success: true, server: conn.name, tools, count: tools.length };
    }
    return await callTool(session, toolName, params);
  } finally {
    await session.close();
  }
}

function finish(output) {
  const code = output.success === false ? 1 : 0;
  process.stdout.write(`${JSON.stringify(output)}\n`, () => process.exit(code));
}

function isMain() {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  run().then(finish, (error) => {
    if (error instanceof McpClientError) finish({ success: false, error: error.message, ...error.extra });
    else finish({ success: false, error: `MCP client failed: ${error?.stack ?? error}` });
  });
}
