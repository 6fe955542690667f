// rye:signed:2026-11-29T01:18:43Z:d51da8b31a1b88b78df8eb2e9a879862cc99c14eec58f30b0630613e755b7e03:2tDs8PaBE-WhWX2S5RNMFAfLSb39cC2-K9uyoQJ8UD5U0P-MUyav8ThtZbb9ZihMolSpf8q7Z6zsSYEqWrYZAQ==:007af625371e6e71
// Launches a node script tool: `node launch.mjs <tool> --project-path <dir>`. The tool sees
// process.argv as if it had been started directly (`node <tool> --project-path <dir>`).
// Also a module: the warm worker of function tools (function-worker.mjs) imports prepareTool.
// It stays one file, since other runtimes (mcp/stdio) hand this launcher to node by its path.
import Module, { createRequire, isBuiltin, register as registerHooks } from 'node:module';

// Other builtins come through require, not as ES modules: node builds an ES module of a builtin
// by reading every export, and reading fs.ReadStream alone loads node's streams (3-5 ms of a
// warm worker's first call, on the thread that runs the tool).
const requireBuiltin = createRequire(import.meta.url);
const { readFileSync, realpathSync } = requireBuiltin('node:fs');
const { dirname, join, sep } = requireBuiltin('node:path');
const { fileURLToPath, pathToFileURL } = requireBuiltin('node:url');

/** Sets up this thread's module loading for `toolPath`; returns the URL to import. */
export async function prepareTool(toolPath, projectPath) {
  const typescript = /\.[cm]?ts$/.test(toolPath);
  // tsx's transform cache is off: it lives in the shared temp folder (another user can create it
  // first, a project's TMPDIR can point it into the project), and a planted entry would run instead
  // of the verified source. tsx reads the variable when it loads, here and in the loader thread,
  // which copies this environment when the first hook is registered: so it is set before any.
  if (typescript) process.env.TSX_DISABLE_CACHE = '1';
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

  // tsx (4.11.0 and later) can be told to read no tsconfig. Earlier versions always read one.
  const TSX_MIN_VERSION = [4, 11, 0];

  function tsxSupported(version) {
    const parts = /^(\d+)\.(\d+)\.(\d+)/.exec(String(version));
    if (!parts) return false;
    for (let i = 0; i < 3; i += 1) {
      const part = Number(parts[i + 1]);
      if (part !== TSX_MIN_VERSION[i]) return part > TSX_MIN_VERSION[i];
    }
    return true;
  }

  if (typescript) {
    // Prefer the tool's own tsx (and the project's, for a project tool), then the one installed
    // beside this launcher's package, then the one ryeos ships (the host's first system bundle,
    // which the executor sets after every env_config). A project's node_modules never serves a
    // tool from another space: it is unsigned code.
    const toolOrigin = original(toolPath);
    const projectTool = toolOrigin.startsWith(join(projectPath, '.ai') + sep);
    const self = original(fileURLToPath(import.meta.url));
    const systemSpace = process.env.RYE_SYSTEM_SPACE;
    const bases = [
      toolOrigin,
      ...(projectTool ? [join(projectPath, 'package.json')] : []),
      self,
      ...(systemSpace ? [join(systemSpace, 'package.json')] : []),
    ];
    let loader;
    for (const base of bases) {
      try {
        // Resolve the ESM entry by hand: createRequire would pick the CommonJS one.
        const manifestPath = createRequire(base).resolve('tsx/package.json');
        const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
        // A tsx that cannot be kept from reading tsconfig.json is passed over.
        if (!tsxSupported(manifest.version)) continue;
        loader = join(dirname(manifestPath), manifest.exports['./esm/api'].import.default);
        break;
      } catch {}
    }
    if (!loader) {
      throw new Error(
        'Cannot run a TypeScript tool: tsx 4.11 or later is not installed. Install it in the project (npm install -D tsx), or beside a global ryeos (npm install -g tsx).',
      );
    }
    // No tsconfig.json is read, for any tool. tsx would look for one from the working directory
    // up, which is the project or above it, and none is verified: its `paths` map a bare import
    // ('yaml', even 'fs') to any file, its compilerOptions change what the source compiles to
    // (jsxImportSource imports a module). Unverified bytes must not decide what a signed tool runs,
    // a project tool included (a `paths` alias would load project files absent from the snapshot).
    const { register } = await import(pathToFileURL(loader).href);
    register({ tsconfig: false });
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
  return pathToFileURL(toolPath).href;
}

/** Whether node was started on this file (not imported by the function worker). */
function startedAsScript() {
  try {
    return realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (startedAsScript()) {
  const [node, , toolPath, ...rest] = process.argv;
  process.argv = [node, toolPath, ...rest];
  const flag = rest.indexOf('--project-path');
  const projectPath = flag === -1 ? process.cwd() : rest[flag + 1];
  let url;
  try {
    url = await prepareTool(toolPath, projectPath);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  }
  await import(url);
}
