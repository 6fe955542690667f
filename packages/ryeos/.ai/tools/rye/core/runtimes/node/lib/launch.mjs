// rye:signed:2026-11-24T21:53:51Z:7161329f1e65e11a862d9067bd50a44064a36e72deb4bca10d6fd4c1b63a74a8:OP-fR4YV8N7Mb-hAIvvJyJXd7KE6FBAYiavwTLmwpcrY6tFtsCCfS6VgMBZ51mLOw6Ap6cWnFxkI2516MiGvDA==:007af625371e6e71
// Launches a node tool: `node launch.mjs <tool> --project-path <dir>`. The tool sees
// process.argv as if it had been started directly (`node <tool> --project-path <dir>`).
import { readFileSync } from 'node:fs';
import Module, { createRequire, isBuiltin, register as registerHooks } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [node, , toolPath, ...rest] = process.argv;
process.argv = [node, toolPath, ...rest];

// The executor runs a tool from a snapshot of its verified files (RYE_SNAPSHOT_SOURCES pairs each
// snapshot root with the original space root). Relative imports stay inside the snapshot, so only
// verified files load; a bare import ('yaml', '@scope/pkg') resolves as if made from the original
// file, against the installation the tool was written for (its node_modules).
const sources = snapshotSources(process.env.RYE_SNAPSHOT_SOURCES);

function snapshotSources(text) {
  try {
    const pairs = JSON.parse(text ?? '[]');
    return Array.isArray(pairs) ? pairs.filter((p) => typeof p?.[0] === 'string' && typeof p?.[1] === 'string') : [];
  } catch {
    return [];
  }
}

/** The original path of a snapshot path (other paths unchanged). */
function original(path) {
  for (const [copy, base] of sources) {
    if (path === copy || path.startsWith(copy + sep)) return base + path.slice(copy.length);
  }
  return path;
}

// A literal specifier in an import/export/require; a computed import() cannot be followed.
const SPECIFIER = /\b(?:from|import)\s*\(?\s*(['"`])([^'"`\n]+)\1|\brequire\s*\(\s*(['"`])([^'"`\n]+)\3/g;
const COMPUTED_IMPORT = /\bimport\s*\(\s*[^'"`\s)]/;
const RELATIVE_SUFFIXES = ['', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '/index.js', '/index.mjs', '/index.ts'];

/**
 * Whether the tool (following its relative imports) imports a package by bare name. Only then
 * is the resolve hook registered: on Node 20 a hook starts a loader thread, ~20 ms per run.
 */
function importsPackages(entry) {
  const seen = new Set();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    if (COMPUTED_IMPORT.test(text)) return true;
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[2] ?? match[4];
      if (specifier.startsWith('./') || specifier.startsWith('../')) {
        for (const suffix of RELATIVE_SUFFIXES) queue.push(join(dirname(file), specifier) + suffix);
      } else if (!specifier.startsWith('/') && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(specifier) && !isBuiltin(specifier)) {
        return true;
      }
    }
  }
  return false;
}

if (sources.length) {
  // require() from CommonJS looks for node_modules above the original file too (in-thread, free).
  const nodeModulePaths = Module._nodeModulePaths;
  Module._nodeModulePaths = (from) => nodeModulePaths(original(from));
}

if (sources.length && importsPackages(toolPath)) {
  const hook = `import { fileURLToPath, pathToFileURL } from 'node:url';
    const sources = ${JSON.stringify(sources)};
    const sep = ${JSON.stringify(sep)};
    const bare = (s) => !/^[./]/.test(s) && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !s.startsWith('#');
    export async function resolve(specifier, context, next) {
      const parent = context.parentURL;
      if (bare(specifier) && parent?.startsWith('file:')) {
        const path = fileURLToPath(parent);
        for (const [copy, base] of sources) {
          if (path.startsWith(copy + sep)) {
            const parentURL = pathToFileURL(base + path.slice(copy.length)).href;
            return next(specifier, { ...context, parentURL });
          }
        }
      }
      return next(specifier, context);
    }`;
  registerHooks(`data:text/javascript,${encodeURIComponent(hook)}`);
}

if (/\.[cm]?ts$/.test(toolPath)) {
  const flag = rest.indexOf('--project-path');
  const projectPath = flag === -1 ? process.cwd() : rest[flag + 1];
  // Prefer the tool's own tsx (and the project's, for a project tool), then the one ryeos ships.
  // A project's node_modules never serves a tool from another space: it is unsigned code.
  const toolOrigin = original(toolPath);
  const projectTool = toolOrigin.startsWith(join(projectPath, '.ai') + sep);
  const self = original(fileURLToPath(import.meta.url));
  const bases = [toolOrigin, ...(projectTool ? [join(projectPath, 'package.json')] : []), self];
  let loader;
  for (const base of bases) {
    try {
      // Resolve the ESM entry by hand: createRequire would pick the CommonJS one.
      const manifestPath = createRequire(base).resolve('tsx/package.json');
      const entry = JSON.parse(readFileSync(manifestPath, 'utf8')).exports['./esm/api'].import.default;
      loader = join(dirname(manifestPath), entry);
      break;
    } catch {}
  }
  if (!loader) {
    process.stderr.write('Cannot run a TypeScript tool: tsx is not installed (npm install -D tsx)\n');
    process.exit(1);
  }
  const { register } = await import(pathToFileURL(loader).href);
  register();
  // TypeScript tools are ES modules (top-level await reads stdin), whatever package.json says;
  // .cts opts out. This hook runs before tsx's and only fixes the entry's format.
  if (!toolPath.endsWith('.cts')) {
    const entry = pathToFileURL(toolPath).href;
    const hook = `export async function resolve(s, c, next) {
      const r = await next(s, c);
      return r.url === ${JSON.stringify(entry)} ? { ...r, format: 'module' } : r;
    }`;
    registerHooks(`data:text/javascript,${encodeURIComponent(hook)}`);
  }
}

await import(pathToFileURL(toolPath).href);
