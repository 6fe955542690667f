// rye:signed:2026-11-22T02:20:09Z:e39f53c8497995291e2a77d716a17f3145cfa5831d7c2c3487ab1e27bb5f9141:Tqe5wUtxOTY7CeCAM7xarn8At5TDfSNtVrfnv1FlYI14iekp6UMmx6R4ozqxMIjW7HEPGOaDR1WPi38JKPLWBw==:007af625371e6e71
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
  const bytes = await atomicWrite(real, content, existing?.mode);
  return { path: shown, bytes_written: bytes, created: !existing };
});
