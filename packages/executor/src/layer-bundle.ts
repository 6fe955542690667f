/**
 * The signed `.ai/` each layer package ships (its system bundle): the items that layer resolves
 * by fixed id. A bundle is found from the package's own files, so it needs no configuration.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RyeError } from '@ryeos/lillux';
import type { SystemBundle } from './spaces.js';

/** Id of the executor's bundle: extractors, primitives and the standard runtimes. */
export const EXECUTOR_BUNDLE_ID = 'ryeos-executor';

const roots = new Map<string, string>();

/**
 * The folder of the installed package `name`: walking up from the module at `moduleUrl` to its
 * package.json (the same code runs from `src/` in tests and `dist/` when built), else resolved
 * from there as a dependency (a host that bundled this code into its own files, as the rye bins do).
 */
export function packageRootOf(moduleUrl: string, name: string): string {
  const key = `${name}\u0000${moduleUrl}`;
  const known = roots.get(key);
  if (known) return known;
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (manifest.name === name) {
        roots.set(key, dir);
        return dir;
      }
    } catch {
      // no readable package.json here; keep walking
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  try {
    const root = dirname(createRequire(moduleUrl).resolve(`${name}/package.json`));
    roots.set(key, root);
    return root;
  } catch {
    throw new RyeError('CONFIG', `Cannot find the folder of the ${name} package from ${moduleUrl}`, {
      hint: `Install ${name} as a package: its package.json and .ai/ folder must sit together.`,
    });
  }
}

/** The executor's own system bundle (used when an executor is built without `systemBundles`). */
export function executorBundle(): SystemBundle {
  return { id: EXECUTOR_BUNDLE_ID, root: packageRootOf(import.meta.url, '@ryeos/executor') };
}
