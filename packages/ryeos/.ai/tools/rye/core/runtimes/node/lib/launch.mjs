// rye:signed:2026-11-22T01:35:56Z:37ce3a30a4321dcb31dbdfcb4986083257432ecae4dbd44c4c4180becb0f68e5:xvacEuGou4VnFMKlvBlKL733yTFhjwe19cKyIZ69I36oazWiUU9fVSuy2cOpEDxxdKTIzhsMms-C60nEFGLIDw==:007af625371e6e71
// Launches a node tool: `node launch.mjs <tool> --project-path <dir>`. The tool sees
// process.argv as if it had been started directly (`node <tool> --project-path <dir>`).
import { readFileSync } from 'node:fs';
import { createRequire, register as registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [node, , toolPath, ...rest] = process.argv;
process.argv = [node, toolPath, ...rest];

if (/\.[cm]?ts$/.test(toolPath)) {
  const flag = rest.indexOf('--project-path');
  const projectPath = flag === -1 ? process.cwd() : rest[flag + 1];
  // Prefer the tool's or project's own tsx; fall back to the one shipped with ryeos.
  const bases = [toolPath, join(projectPath, 'package.json'), import.meta.url];
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
