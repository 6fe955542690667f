// rye:signed:2026-11-28T03:19:28Z:c5fd5cca2481eb3819a3984a1cbc9e222fda6fe847f09e7b181c484c1594d3ca:-pNwAjW85trx6ZZjkZHPtMvnXJLSpC-Gyf3ZXgXAhvLkGPOUeSHF9FNI9t5ydeStn0ZGbBzjyjYGnVdzEkQmAA==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
export const __tool_description__ =
  'Create or overwrite a text file inside the project (atomic; creates parent directories)';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File to write, relative to the project root (alias: file_path)' },
    file_path: { type: 'string', description: 'Alias of path' },
    content: { type: 'string', description: 'The whole new content of the file (UTF-8, at most 10 MB)' },
  },
  required: ['content'],
  anyOf: [{ required: ['path'] }, { required: ['file_path'] }],
};

import { atomicWrite } from './_lib/atomic-write.mjs';
import { formatBytes, MAX_FILE_BYTES, statOrUndefined } from './_lib/files.mjs';
import { projectRoot, resolveInside } from './_lib/paths.mjs';
import { requiredString, functionTool, ToolError } from './_lib/tool.mjs';

export const execute = functionTool(async (params, projectPath) => {
  const root = await projectRoot(projectPath);
  const path = requiredString(params, 'path', ['file_path']);
  const content = params.content;
  if (typeof content !== 'string') throw new ToolError("Parameter 'content' is required (a string)");
  const size = Buffer.byteLength(content, 'utf8');
  if (size > MAX_FILE_BYTES)
    throw new ToolError(`content is ${formatBytes(size)}; at most ${formatBytes(MAX_FILE_BYTES)} is written`);
  const { real, shown } = await resolveInside(root, path);
  const existing = await statOrUndefined(real);
  if (existing?.isDirectory()) throw new ToolError(`${shown} is a directory`);
  const bytes = atomicWrite(real, shown, content, existing?.mode, root);
  return { path: shown, bytes_written: bytes, created: !existing };
});
