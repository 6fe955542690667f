// rye:signed:2026-11-29T02:49:00Z:3240dde0b76e02cade7818ea8753fe0548d89d66a176fe31e76062f443200cbb:vUDX8_5RzVmKUmdsvo2qR5EVszXeHeo7ZKxb6dV1wL05Pq64TMDXm1PuNcojVdM1hSXqOFwP-VLAmSz0imuVDQ==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
// Read-only: calls of one response may run side by side.
export const __parallel_safe__ = true;
export const __tool_description__ =
  'Find files inside the project by glob pattern (e.g. src/**/*.ts); sorted paths relative to the project root';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    pattern: {
      type: 'string',
      description: "Glob pattern relative to path, e.g. '**/*.ts' (no '..', not absolute; dotfiles match)",
    },
    path: { type: 'string', description: 'Base directory, relative to the project root (default: the root)' },
    limit: { type: 'integer', minimum: 1, description: 'Maximum number of paths returned (default 1000)' },
  },
  required: ['pattern'],
};

import { statOrUndefined } from './_lib/files.mjs';
import { isInside, projectRoot, resolveInside, shownPath } from './_lib/paths.mjs';
import { integer, optionalString, requiredString, functionTool, ToolError } from './_lib/tool.mjs';
import { listFiles } from './_lib/walk.mjs';

export const execute = functionTool(async (params, projectPath) => {
  const root = await projectRoot(projectPath);
  const pattern = requiredString(params, 'pattern');
  const limit = integer(params, 'limit', 1000, 1);
  const { real: base, shown } = await resolveInside(root, optionalString(params, 'path') ?? '.');
  const info = await statOrUndefined(base);
  if (!info) throw new ToolError(`Directory not found: ${shown}`);
  if (!info.isDirectory()) throw new ToolError(`${shown} is not a directory`);

  // The pattern check already keeps matches under base; the filter is a second line of defence.
  const found = (await listFiles(base, pattern, { root }))
    .filter((file) => isInside(root, file))
    .map((file) => shownPath(root, file))
    .sort();
  const truncated = found.length > limit;
  const files = found.slice(0, limit);
  const result = { pattern, base: shown, files, count: files.length, total: found.length, truncated };
  if (truncated)
    result.note = `${found.length - limit} more matches not shown (limit=${limit}); narrow the pattern or raise limit`;
  return result;
});
