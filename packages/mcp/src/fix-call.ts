/**
 * The MCP tool call that carries out a reply's `fix`: the layers below say what fixes a problem
 * as data, and an MCP client is told which of its four tools does it. It checks the fields it
 * renders itself (importing lillux's whole index for `isFix` would cost this adapter's start) and
 * leaves any other fix as prose.
 */

type Space = 'project' | 'user';

/** The fixes an MCP client can carry out with search, load and sign. */
type CallableFix =
  | { action: 'sign'; refs: string[]; space: Space }
  | { action: 'copy_to_space'; ref: string; to: Space }
  | { action: 'search'; item_type: string }
  | { action: 'load'; ref: string };

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isSpace = (value: unknown): value is Space => value === 'project' || value === 'user';

function callable(value: unknown): CallableFix | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const fix = value as Record<string, unknown>;
  switch (fix.action) {
    case 'sign':
      return Array.isArray(fix.refs) && fix.refs.length > 0 && fix.refs.every(isText) && isSpace(fix.space)
        ? { action: 'sign', refs: fix.refs, space: fix.space }
        : undefined;
    case 'copy_to_space':
      return isText(fix.ref) && isSpace(fix.to)
        ? { action: 'copy_to_space', ref: fix.ref, to: fix.to }
        : undefined;
    case 'search':
      return isText(fix.item_type) ? { action: 'search', item_type: fix.item_type } : undefined;
    case 'load':
      return isText(fix.ref) ? { action: 'load', ref: fix.ref } : undefined;
    default:
      return undefined;
  }
}

function call(tool: string, args: Record<string, string>): string {
  return `${tool} with ${JSON.stringify(args)}`;
}

/** The call (or calls) that carry out `fix`; each also takes the project's `project_path`. */
export function fixCall(value: unknown): string | undefined {
  const fix = callable(value);
  if (!fix) return undefined;
  switch (fix.action) {
    case 'sign':
      return `Call ${fix.refs.map((ref) => call('sign', { item_id: ref, source: fix.space })).join(', then ')} (and project_path).`;
    case 'copy_to_space':
      return `Call ${call('load', { item_id: fix.ref, source: 'system', destination: fix.to })}, then ${call('sign', { item_id: fix.ref, source: fix.to })} (and project_path).`;
    case 'search':
      return `Call ${call('search', { scope: fix.item_type, query: '<words>' })} (and project_path).`;
    case 'load':
      return `Call ${call('load', { item_id: fix.ref })} (and project_path).`;
  }
}

function withCall<T extends object>(result: T): T {
  const { fix, hint } = result as { fix?: unknown; hint?: unknown };
  const rendered = fixCall(fix);
  if (!rendered) return result;
  return { ...result, hint: typeof hint === 'string' && hint ? `${hint} ${rendered}` : rendered };
}

/**
 * A reply as an MCP client reads it: its hint and each failed item's (a batch sign) end with the
 * tool call that fixes it. Only those places: a fix nested in a tool's output is that tool's data.
 */
export function withMcpHints<T>(result: T): T {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const rendered = withCall(result);
  const failed = (rendered as { failed?: unknown }).failed;
  if (!Array.isArray(failed)) return rendered;
  return {
    ...rendered,
    failed: failed.map((item: unknown) =>
      typeof item === 'object' && item !== null ? withCall(item) : item,
    ),
  };
}
