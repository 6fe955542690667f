// rye:signed:2026-11-29T02:49:00Z:ff04f75ef7239c9afb17247acd6194e50e0876337526fe0fbcb9d7447b4cfcda:H1w9hAZRywsleep-DdRAzD9f9oyWQ4liXVj5tBjb_1gQOZUL0eKO955PtggD6O7ZcyWq-pD1Xmk8Esk3hxf0Cg==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'rye/file-system';
// Read-only: calls of one response may run side by side.
export const __parallel_safe__ = true;
export const __tool_description__ =
  'Search file contents inside the project with a regular expression; matching lines with line numbers';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    pattern: {
      type: 'string',
      description:
        'Regular expression matched against each line, in RE2 syntax as ripgrep takes it (no lookaround or backreferences; at most 1000 characters)',
    },
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
      maximum: 100,
      description: 'Lines of context before and after each match (default 0, at most 100)',
    },
  },
  required: ['pattern'],
};

import { isBinary, MAX_FILE_BYTES, readChecked, statOrUndefined } from './_lib/files.mjs';
import { projectRoot, resolveInside, shownPath } from './_lib/paths.mjs';
import { compileBounded } from './_lib/regex.mjs';
import { boolean, integer, optionalString, requiredString, functionTool, ToolError } from './_lib/tool.mjs';
import { listFiles } from './_lib/walk.mjs';

const MAX_LINE_CHARS = 2000;
const MAX_CONTEXT = 100;
/** Lines in one result, matches and context together: whatever limit and context ask for, a
 * result stays a few MB (each line is clipped to MAX_LINE_CHARS). */
const MAX_RESULT_LINES = 10_000;
/** A line is matched on its first 64 KB: RE2's time per character grows with the pattern. */
const MAX_MATCHED_CHARS = 65_536;
/** A search stops after this long, with what it found so far (its worker serves other calls). */
const MAX_SEARCH_MS = 30_000;

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
  const regex = compileBounded(pattern, boolean(params, 'ignore_case'));
  const limit = integer(params, 'limit', 500, 1);
  const context = integer(params, 'context', 0, 0, MAX_CONTEXT);
  const filter = optionalString(params, 'glob', ['include']);
  const { real: base, shown, guarded } = await resolveInside(root, optionalString(params, 'path') ?? '.');
  const files = await candidates(base, shown, filter, root);

  const matches = [];
  const skipped = { binary: 0, too_large: 0 };
  let changed = 0;
  let searched = 0;
  let lineCount = 0;
  let longLines = 0;
  let truncated = false;
  let timedOut = false;
  const deadline = performance.now() + MAX_SEARCH_MS;
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
      }, guarded));
    } catch {
      changed++;
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
      if (performance.now() > deadline) {
        truncated = timedOut = true;
        break;
      }
      const line = lines[i];
      if (line.length > MAX_MATCHED_CHARS) longLines++;
      if (!regex.test(line.length > MAX_MATCHED_CHARS ? line.slice(0, MAX_MATCHED_CHARS) : line)) continue;
      const before = Math.max(0, i - context);
      const after = Math.min(lines.length, i + 1 + context);
      if (matches.length === limit || lineCount + (after - before) > MAX_RESULT_LINES) {
        truncated = true;
        break;
      }
      lineCount += after - before;
      const match = { path, line: i + 1, text: clip(lines[i]) };
      if (context > 0) {
        const around = (from, to) =>
          lines.slice(from, to).map((text, k) => ({ line: from + k + 1, text: clip(text) }));
        match.before = around(before, i);
        match.after = around(i + 1, after);
      }
      matches.push(match);
    }
    if (truncated) break;
  }
  if (files.length === 1 && files[0] === base && searched === 0) {
    const why = skipped.binary
      ? 'is a binary file'
      : skipped.too_large
        ? 'is larger than 10 MB'
        : changed
          ? 'changed or moved while it was searched'
          : 'is no longer a regular file';
    throw new ToolError(`${shown} ${why}; not searched`);
  }

  const result = {
    pattern,
    path: shown,
    matches,
    count: matches.length,
    files_searched: searched,
    truncated,
  };
  if (skipped.binary || skipped.too_large) result.skipped = skipped;
  const notes = [];
  if (timedOut)
    notes.push(`Stopped after ${MAX_SEARCH_MS / 1000} s with what was found so far; narrow the path or glob`);
  else if (truncated && matches.length === limit)
    notes.push(`Stopped at limit=${limit} matches; narrow the pattern, path or glob, or raise limit`);
  else if (truncated)
    notes.push(
      `Stopped at ${MAX_RESULT_LINES} lines of matches and context; narrow the pattern, path or glob, or lower context`,
    );
  if (longLines) {
    result.long_lines = longLines;
    notes.push(`${longLines} line(s) longer than ${MAX_MATCHED_CHARS} characters were matched on their start only`);
  }
  if (notes.length) result.note = notes.join('. ');
  return result;
});
