/**
 * Where the installed `ryeos` package lives, found by walking up from this module (the same code
 * runs from `src/` in tests and from `dist/` when built). The system bundle `.ai/` sits there.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: { root: string; version: string } | undefined;

function locate(): { root: string; version: string } {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'ryeos') {
        cached = { root: dir, version: manifest.version ?? '0.0.0' };
        return cached;
      }
    } catch {
      // no package.json here; keep walking
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Cannot locate the ryeos package root');
    dir = parent;
  }
}

export function packageRoot(): string {
  return locate().root;
}

export function packageVersion(): string {
  return locate().version;
}

/** The system bundle: the `.ai/` shipped inside this package. */
export function systemSpaceRoot(): string {
  return packageRoot();
}
