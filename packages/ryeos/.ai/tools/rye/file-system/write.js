// rye:signed:2026-11-24T22:47:15Z:6ee802b1e1ee01d0c653b6d79b4d090103f4dcb589434a3ce111bdd68c6236f6:V4q4zTzzlxvPJj4mQ8Nd9xhX3mF-CYkV67gBF2F4HsJS6GM21JSGAWofnwxfJSmlj63EC2kwdCEum5AbdoSDBQ==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/node';
export const __category__ = 'rye/file-system';
export const __tool_description__ =
  'Create or overwrite a text file inside the project (atomic; creates parent directories)';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File to write, relative to the project root (alias: file_path)' },
    content: { type: 'string', description: 'The whole new content of the file (UTF-8, at most 10 MB)' },
  },
  required: ['path', 'content'],
};

import { atomicWrite, formatBytes, MAX_FILE_BYTES, statOrUndefined } from './_lib/files.mjs';
import { projectRoot, resolveInside } from './_lib/paths.mjs';
import { requiredString, runTool, ToolError } from './_lib/tool.mjs';

await runTool(async (params, projectPath) => {
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
  const bytes = await atomicWrite(real, content, existing?.mode, root);
  return { path: shown, bytes_written: bytes, created: !existing };
});
