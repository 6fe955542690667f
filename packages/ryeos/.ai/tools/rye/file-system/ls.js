// rye:signed:2026-11-29T02:49:00Z:48a746e5d243e2602f10b246550f9aaed246c0642ef00926cfd17bd66e4c20cc:uNtkPLyHDGRCU1SuOrPdJ7EunS4OBkJLbLyt27wvoNq1spIPzLnhu3FyaS7rcESCqn1PpAGX9Puj6JG128yYDw==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
// Read-only: calls of one response may run side by side.
export const __parallel_safe__ = true;
export const __tool_description__ =
  'List a directory inside the project: name, type and size, directories first';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    path: {
      type: 'string',
      description: 'Directory to list, relative to the project root (default: the root)',
    },
    file_path: { type: 'string', description: 'Alias of path' },
  },
};

import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { statOrUndefined } from './_lib/files.mjs';
import { pathError, projectRoot, resolveInside } from './_lib/paths.mjs';
import { optionalString, functionTool, ToolError } from './_lib/tool.mjs';

const ORDER = { dir: 0, file: 1, symlink: 1, other: 1 };

function typeOf(entry) {
  if (entry.isDirectory()) return 'dir';
  if (entry.isFile()) return 'file';
  return entry.isSymbolicLink() ? 'symlink' : 'other';
}

export const execute = functionTool(async (params, projectPath) => {
  const root = await projectRoot(projectPath);
  const { real, shown } = await resolveInside(root, optionalString(params, 'path', ['file_path']) ?? '.');
  const info = await statOrUndefined(real);
  if (!info) throw new ToolError(`Directory not found: ${shown}`);
  if (!info.isDirectory()) throw new ToolError(`${shown} is not a directory (use rye/file-system/read)`);

  const entries = [];
  let dirents;
  try {
    dirents = await readdir(real, { withFileTypes: true });
  } catch (error) {
    throw pathError(error, shown);
  }
  for (const dirent of dirents) {
    // lstat: a symlink is reported as such, never followed (its target may be outside the root).
    const entry = await lstat(join(real, dirent.name)).catch(() => undefined);
    if (!entry) continue; // removed while listing
    entries.push({ name: dirent.name, type: typeOf(entry), size: entry.size });
  }
  entries.sort((a, b) => ORDER[a.type] - ORDER[b.type] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { path: shown, entries, count: entries.length };
});
