// The build of every ryeos package: ESM for Node 20, bundled declarations, code split between
// entries. A package names only its entry points.
import { defineConfig } from 'tsup';

/** @param {string[]} entry entry points, e.g. ['src/index.ts'] */
export function packageBuild(entry = ['src/index.ts']) {
  return defineConfig({
    entry,
    format: ['esm'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    splitting: true,
  });
}
