// rye:signed:2026-11-22T02:20:09Z:d59b8b1be1ac6c040ac3f50ee520a1c62c57f9fb2a96c3aa7e7c93a77ce8108f:mllhpsjqJ6dLXiiL8EOiI01tkeWlIKHK5I4nMk3pOsSjVk55YwLZK-jRiB2tfMtpLJi-EUhWuyECbGZvPyYJDg==:007af625371e6e71
// Shared plumbing of the rye/file-system tools: the stdin/stdout protocol of the node runtime
// and parameter checks. A tool prints exactly one JSON object; failures the caller can act on
// are `{success: false, error}` with exit code 0 (the executor turns them into an error envelope).

/** A failure to report to the caller as `{success: false, error}`. */
export class ToolError extends Error {}

/** `--project-path <dir>` from argv; the tool's cwd is its own folder (runtime anchor), never the project. */
function projectPathArg() {
  const i = process.argv.indexOf('--project-path');
  const value = i === -1 ? undefined : process.argv[i + 1];
  if (!value) throw new ToolError('Missing --project-path argument (run this tool through rye execute)');
  return value;
}

async function readParams() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  if (!text.trim()) return {};
  const params = JSON.parse(text);
  if (!params || typeof params !== 'object' || Array.isArray(params))
    throw new ToolError('Parameters must be a JSON object');
  return params;
}

/**
 * Runs `handler(params, projectPath)` and prints its result (merged into `{success: true}`), or
 * `{success: false, error}` for any thrown error.
 */
export async function runTool(handler) {
  let result;
  try {
    result = { success: true, ...(await handler(await readParams(), projectPathArg())) };
  } catch (error) {
    if (!(error instanceof ToolError)) process.stderr.write(`${error?.stack ?? error}\n`);
    result = { success: false, error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** A required non-empty string parameter; `aliases` are accepted alternative names. */
export function requiredString(params, name, aliases = []) {
  const value = optionalString(params, name, aliases);
  if (value === undefined || value === '') throw new ToolError(`Parameter '${name}' is required`);
  return value;
}

export function optionalString(params, name, aliases = []) {
  for (const key of [name, ...aliases]) {
    const value = params[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw new ToolError(`Parameter '${key}' must be a string`);
    return value;
  }
  return undefined;
}

/** An integer parameter ≥ `min` (numeric strings accepted, as LLM clients send them). */
export function integer(params, name, fallback, min = 0) {
  const raw = params[name];
  if (raw === undefined || raw === null || raw === '') return fallback;
  const value = typeof raw === 'string' ? Number(raw) : raw;
  if (!Number.isInteger(value) || value < min)
    throw new ToolError(`Parameter '${name}' must be an integer ≥ ${min} (got ${JSON.stringify(raw)})`);
  return value;
}

export function boolean(params, name, fallback = false) {
  const raw = params[name];
  if (raw === undefined || raw === null) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new ToolError(`Parameter '${name}' must be a boolean`);
}
