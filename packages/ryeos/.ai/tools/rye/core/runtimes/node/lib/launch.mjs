// rye:signed:2026-11-22T02:37:35Z:4adfd400f9eab8c7657b600e2fc9f0802d8df8224acd3180b72996845b37d63c:e3ecV3XRpAQ7Xy7B9xHw4xqda7nYm9m7imBDAXvqBWqsBPGxlE9XlonaSE0wCt45Przqy_RVtoR1ny_p_R1qCA==:007af625371e6e71
// Launches a node tool: `node launch.mjs <tool> --project-path <dir>`. The tool sees
// process.argv as if it had been started directly (`node <tool> --project-path <dir>`).
import { readFileSync } from 'node:fs';
import { createRequire, register as registerHooks } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

const [node, , toolPath, ...rest] = process.argv;
process.argv = [node, toolPath, ...rest];

if (/\.[cm]?ts$/.test(toolPath)) {
  const flag = rest.indexOf('--project-path');
  const projectPath = flag === -1 ? process.cwd() : rest[flag + 1];
  // Prefer the tool's own tsx (and the project's, for a project tool), then the one ryeos ships.
  // A project's node_modules never serves a tool from another space: it is unsigned code.
  const projectTool = toolPath.startsWith(join(projectPath, '.ai') + sep);
  const bases = [toolPath, ...(projectTool ? [join(projectPath, 'package.json')] : []), import.meta.url];
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
