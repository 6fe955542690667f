// rye:signed:2026-11-25T02:47:07Z:6049101bf16b925e433afb070bd453f440ec049ae543a471fbfdd1e6b25284b1:Zusifzvn_pfMX20olf1pJ7fRxLX2BI7Kpr3C1ngjT9SP0zTrC2Ec6aOUgt-hQ4Upw82SSu-Thjy79NDOlb9ZBQ==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
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
import { projectRoot, resolveInside } from './_lib/paths.mjs';
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
  for (const dirent of await readdir(real, { withFileTypes: true })) {
    // lstat: a symlink is reported as such, never followed (its target may be outside the root).
    const entry = await lstat(join(real, dirent.name)).catch(() => undefined);
    if (!entry) continue; // removed while listing
    entries.push({ name: dirent.name, type: typeOf(entry), size: entry.size });
  }
  entries.sort((a, b) => ORDER[a.type] - ORDER[b.type] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { path: shown, entries, count: entries.length };
});
