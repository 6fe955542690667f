// rye:signed:2026-11-29T02:49:00Z:eb200866c8e08bd9a5ce7d7056c81409a6b2411eb87a36aaec767c7c8bb528ee:pv1DjTKWnWBZeM8ZvWKPBJkMF-VmhQ8qfhs7UMTMM3tOS5fhfGniZjyFievhXXrNtouU-AVegxnSgQfrZcewBA==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
// Read-only: calls of one response may run side by side.
export const __parallel_safe__ = true;
export const __tool_description__ =
  'Read a text file inside the project as numbered lines (cat -n style), a window at a time (offset/limit)';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File to read, relative to the project root (alias: file_path)' },
    file_path: { type: 'string', description: 'Alias of path' },
    offset: { type: 'integer', minimum: 1, description: 'First line to show, 1-based (default 1)' },
    limit: { type: 'integer', minimum: 1, description: 'Maximum number of lines to show (default 2000)' },
  },
  anyOf: [{ required: ['path'] }, { required: ['file_path'] }],
};

import { readTextFile } from './_lib/files.mjs';
import { projectRoot, resolveInside } from './_lib/paths.mjs';
import { integer, requiredString, functionTool, ToolError } from './_lib/tool.mjs';

const MAX_LINE_CHARS = 2000;
// Keeps one read within an LLM's context budget; the note says where to continue.
const MAX_OUTPUT_BYTES = 51_200;

function numbered(n, text) {
  const cut =
    text.length > MAX_LINE_CHARS
      ? `${text.slice(0, MAX_LINE_CHARS)} … [line truncated: ${text.length - MAX_LINE_CHARS} more chars]`
      : text;
  return `${String(n).padStart(6)}\t${cut}`;
}

export const execute = functionTool(async (params, projectPath) => {
  const root = await projectRoot(projectPath);
  const path = requiredString(params, 'path', ['file_path']);
  const offset = integer(params, 'offset', 1, 1);
  const limit = integer(params, 'limit', 2000, 1);
  const { real, shown, guarded } = await resolveInside(root, path);
  const { text } = await readTextFile(real, shown, root, guarded);

  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop(); // a final newline ends the last line; it is not a line
  const total = lines.length;
  const base = { path: shown, total_lines: total, offset };
  if (total === 0) return { ...base, output: '', line_count: 0, truncated: false, note: '(empty file)' };
  if (offset > total) throw new ToolError(`offset ${offset} is past the end of ${shown} (${total} lines)`);

  const out = [];
  let bytes = 0;
  const end = Math.min(total, offset - 1 + limit);
  for (let i = offset - 1; i < end; i++) {
    const line = numbered(i + 1, lines[i]);
    bytes += Buffer.byteLength(line) + 1;
    if (bytes > MAX_OUTPUT_BYTES && out.length > 0) break;
    out.push(line);
  }
  const next = offset + out.length;
  const remaining = total - (next - 1);
  const result = { ...base, output: out.join('\n'), line_count: out.length, truncated: remaining > 0 };
  if (remaining > 0) {
    const why = out.length < limit ? ` (output capped at ${MAX_OUTPUT_BYTES} bytes)` : '';
    result.note = `… ${remaining} more lines${why}; use offset=${next} to continue`;
  }
  return result;
});
