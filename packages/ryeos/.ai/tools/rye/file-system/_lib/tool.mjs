// rye:signed:2026-11-28T03:21:28Z:c00d7ff0eed429216b7103a0fc586cdf1fcae8aa6d579add36b28229b207f821:_PmVoN0aUmOVm_Rv3AA_yFzTtC3gUcP4ZK6Y0nRHAj2abh0M2w5gsrmxk9IORADdmGf4tFeQ-nb_lLAWcripDg==:007af625371e6e71
// Shared plumbing of the rye/file-system tools: the function-style contract of the node/function
// runtime and parameter checks. A tool exports `execute(params, context)`; failures the caller
// can act on are `{success: false, error}` (the executor turns them into an error envelope).

/** A failure to report to the caller as `{success: false, error}`. */
export class ToolError extends Error {}

/**
 * The `execute(params, context)` of a tool: runs `handler(params, projectPath)` and returns its
 * result merged into `{success: true}`, or `{success: false, error}` for any thrown error (an
 * unexpected one also goes to the log with its stack).
 */
export function functionTool(handler) {
  return async (params, context) => {
    try {
      const projectPath = context?.projectPath;
      if (!projectPath) throw new ToolError('Missing the project path (run this tool through rye execute)');
      if (!params || typeof params !== 'object' || Array.isArray(params))
        throw new ToolError('Parameters must be a JSON object');
      return { success: true, ...(await handler(params, projectPath)) };
    } catch (error) {
      if (!(error instanceof ToolError)) console.error(error?.stack ?? error);
      return { success: false, error: error instanceof Error ? error.message : String(error) };
    }
  };
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
export function integer(params, name, fallback, min = 0, max = Number.MAX_SAFE_INTEGER) {
  const raw = params[name];
  if (raw === undefined || raw === null || raw === '') return fallback;
  const value = typeof raw === 'string' ? Number(raw) : raw;
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new ToolError(`Parameter '${name}' must be an integer ${range} (got ${JSON.stringify(raw)})`);
  }
  return value;
}

export function boolean(params, name, fallback = false) {
  const raw = params[name];
  if (raw === undefined || raw === null) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new ToolError(`Parameter '${name}' must be a boolean`);
}
