// rye:signed:2026-11-28T02:47:47Z:93916feba5dbd8bbc2f67cee02303c7b81ba365080ba6e1953401f4505a0b0d7:jJzZPlhgTXTIQmmKLt5im1KUOvSbneiwlSbW5cG3hJaOC5orCRdNjESyc-OYpByLMZwglNOg50TLrE6R2m5WCA==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
export const __tool_description__ =
  'Search file contents inside the project with a regular expression; matching lines with line numbers';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    pattern: { type: 'string', description: 'JavaScript regular expression, matched against each line' },
    path: {
      type: 'string',
      description: 'File or directory to search, relative to the project root (default: the root)',
    },
    glob: {
      type: 'string',
      description:
        "Only search files matching this glob, e.g. '*.ts' (any depth) or 'src/**/*.js' (alias: include)",
    },
    include: { type: 'string', description: 'Alias of glob' },
    ignore_case: { type: 'boolean', description: 'Case-insensitive match (default false)' },
    limit: { type: 'integer', minimum: 1, description: 'Maximum number of matching lines (default 500)' },
    context: {
      type: 'integer',
      minimum: 0,
      description: 'Lines of context before and after each match (default 0)',
    },
  },
  required: ['pattern'],
};

import { isBinary, MAX_FILE_BYTES, readChecked, statOrUndefined } from './_lib/files.mjs';
import { projectRoot, resolveInside, shownPath } from './_lib/paths.mjs';
import { boolean, integer, optionalString, requiredString, functionTool, ToolError } from './_lib/tool.mjs';
import { listFiles } from './_lib/walk.mjs';

const MAX_LINE_CHARS = 2000;

function compile(pattern, ignoreCase) {
  try {
    return new RegExp(pattern, ignoreCase ? 'i' : '');
  } catch (error) {
    throw new ToolError(`Invalid regular expression '${pattern}': ${error.message}`);
  }
}

const clip = (text) =>
  text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} … [line truncated]` : text;

/** The files to search: `base` itself, or the files under it (optionally filtered by a glob). */
async function candidates(base, shown, filter, root) {
  const info = await statOrUndefined(base);
  if (!info) throw new ToolError(`Path not found: ${shown}`);
  if (info.isFile()) return [base];
  if (!info.isDirectory()) throw new ToolError(`${shown} is neither a file nor a directory`);
  // Like ripgrep's --glob: a pattern without '/' matches file names at any depth.
  const pattern = !filter ? '**/*' : filter.includes('/') ? filter : `**/${filter}`;
  return (await listFiles(base, pattern, { root })).sort();
}

export const execute = functionTool(async (params, projectPath) => {
  const root = await projectRoot(projectPath);
  const pattern = requiredString(params, 'pattern');
  const regex = compile(pattern, boolean(params, 'ignore_case'));
  const limit = integer(params, 'limit', 500, 1);
  const context = integer(params, 'context', 0, 0);
  const filter = optionalString(params, 'glob', ['include']);
  const { real: base, shown } = await resolveInside(root, optionalString(params, 'path') ?? '.');
  const files = await candidates(base, shown, filter, root);

  const matches = [];
  const skipped = { binary: 0, too_large: 0 };
  let searched = 0;
  let truncated = false;
  for (const file of files) {
    const info = await statOrUndefined(file);
    if (!info?.isFile()) continue;
    if (info.size > MAX_FILE_BYTES) {
      skipped.too_large++;
      continue;
    }
    let buffer;
    try {
      ({ buffer } = readChecked(file, shownPath(root, file), root, (opened) => {
        if (!opened.isFile() || opened.size > MAX_FILE_BYTES) throw new ToolError('changed');
      }));
    } catch {
      continue; // changed or moved while searching: not read
    }
    if (isBinary(buffer)) {
      skipped.binary++;
      continue;
    }
    searched++;
    const lines = buffer.toString('utf8').split(/\r?\n/);
    const path = shownPath(root, file);
    for (let i = 0; i < lines.length && !truncated; i++) {
      if (!regex.test(lines[i])) continue;
      if (matches.length === limit) {
        truncated = true;
        break;
      }
      const match = { path, line: i + 1, text: clip(lines[i]) };
      if (context > 0) {
        const around = (from, to) =>
          lines.slice(from, to).map((text, k) => ({ line: from + k + 1, text: clip(text) }));
        match.before = around(Math.max(0, i - context), i);
        match.after = around(i + 1, Math.min(lines.length, i + 1 + context));
      }
      matches.push(match);
    }
    if (truncated) break;
  }
  if (files.length === 1 && files[0] === base && searched === 0)
    throw new ToolError(
      `${shown} is ${skipped.binary ? 'a binary file' : 'larger than 10 MB'}; not searched`,
    );

  const result = {
    pattern,
    path: shown,
    matches,
    count: matches.length,
    files_searched: searched,
    truncated,
  };
  if (skipped.binary || skipped.too_large) result.skipped = skipped;
  if (truncated)
    result.note = `Stopped at limit=${limit} matches; narrow the pattern, path or glob, or raise limit`;
  return result;
});
