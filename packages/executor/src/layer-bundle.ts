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
 * The folder of the installed package `name`: the package holding the module at `moduleUrl` when
 * that is it (the same code runs from `src/` in tests and `dist/` when built), else `name` resolved
 * from there as a dependency (a host that bundled this code into its own files, as the rye bins
 * do). The walk stops at the module's own package.json: a folder above it (a project the host is
 * installed in) never gets to say it is this package.
 */
export function packageRootOf(moduleUrl: string, name: string): string {
  const key = `${name}\u0000${moduleUrl}`;
  const known = roots.get(key);
  if (known) return known;
  let root: string | undefined;
  const own = owningPackage(dirname(fileURLToPath(moduleUrl)));
  if (own?.name === name) root = own.dir;
  else {
    try {
      root = dirname(createRequire(moduleUrl).resolve(`${name}/package.json`));
    } catch {
      throw new RyeError('CONFIG', `Cannot find the folder of the ${name} package from ${moduleUrl}`, {
        hint: `Install ${name} as a package: its package.json and .ai/ folder must sit together.`,
      });
    }
  }
  roots.set(key, root);
  return root;
}

/** The nearest folder at or above `dir` with a package.json, and the name it gives. */
function owningPackage(dir: string): { dir: string; name: unknown } | undefined {
  for (let current = dir; ; current = dirname(current)) {
    let text: string | undefined;
    try {
      text = readFileSync(join(current, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      try {
        return { dir: current, name: (JSON.parse(text) as { name?: unknown }).name };
      } catch {
        return { dir: current, name: undefined };
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

/** The executor's own system bundle (used when an executor is built without `systemBundles`). */
export function executorBundle(): SystemBundle {
  return { id: EXECUTOR_BUNDLE_ID, root: packageRootOf(import.meta.url, '@ryeos/executor') };
}
