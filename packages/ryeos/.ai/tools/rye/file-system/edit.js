// rye:signed:2026-11-28T04:11:37Z:ea633f0172d0ee40c6176d8eafe9070e8594b95b36039c6617c4c6af412a2785:5hg7s0VCnE9Y1srgwWCYnP_NgCCfat25X7itnCbV0kjYpPcqBFk6gQV3HFpq2BreArOj2DDwqxmAaxCUlbOACg==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
export const __tool_description__ =
  'Edit a text file inside the project by replacing an exact, unique string (or every occurrence)';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File to edit, relative to the project root (alias: file_path)' },
    file_path: { type: 'string', description: 'Alias of path' },
    old_string: {
      type: 'string',
      description: 'Exact text to replace, whitespace included; must occur once unless replace_all',
    },
    new_string: { type: 'string', description: 'Replacement text (must differ from old_string)' },
    replace_all: { type: 'boolean', description: 'Replace every occurrence (default false)' },
  },
  required: ['old_string', 'new_string'],
  anyOf: [{ required: ['path'] }, { required: ['file_path'] }],
};

import { atomicWrite } from './_lib/atomic-write.mjs';
import { readTextFile } from './_lib/files.mjs';
import { projectRoot, resolveInside } from './_lib/paths.mjs';
import { boolean, requiredString, functionTool, ToolError } from './_lib/tool.mjs';

function occurrences(text, needle) {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

export const execute = functionTool(async (params, projectPath) => {
  const root = await projectRoot(projectPath);
  const path = requiredString(params, 'path', ['file_path']);
  let oldString = requiredString(params, 'old_string');
  let newString = params.new_string;
  if (typeof newString !== 'string') throw new ToolError("Parameter 'new_string' is required (a string)");
  if (oldString === newString) throw new ToolError('old_string and new_string are identical; nothing to do');
  const replaceAll = boolean(params, 'replace_all');
  const { real, shown, guarded } = await resolveInside(root, path);
  const { text, mode } = await readTextFile(real, shown, root, guarded);

  let count = occurrences(text, oldString);
  // Models write '\n'; a CRLF file still matches, and the replacement keeps its line endings.
  if (count === 0 && text.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r')) {
    const crlf = (s) => s.replace(/\r?\n/g, '\r\n');
    const n = occurrences(text, crlf(oldString));
    if (n > 0) [count, oldString, newString] = [n, crlf(oldString), crlf(newString)];
  }
  if (count === 0)
    throw new ToolError(`old_string not found in ${shown} (it must match exactly, whitespace included)`);
  if (count > 1 && !replaceAll)
    throw new ToolError(
      `old_string found ${count} times in ${shown}; include more surrounding context to make it unique, ` +
        'or pass replace_all: true to replace every occurrence',
    );
  // No replacement *string* for String.replace: it would interpret `$&`, `$1`, … in new_string.
  const updated = replaceAll
    ? text.split(oldString).join(newString)
    : text.replace(oldString, () => newString);
  atomicWrite(real, shown, updated, mode, root);
  return { path: shown, replacements: replaceAll ? count : 1 };
});
