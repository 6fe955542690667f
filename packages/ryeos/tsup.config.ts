import { packageBuild } from '@ryeos/build-config/tsup';
import type { Options } from 'tsup';
import { defineConfig } from 'tsup';
import { builtinsByRequire } from './scripts/builtins-by-require.mjs';
import { bundleLayers, LAYER_IMPORT, LAZY, lazyFromCli, verbsApart } from './scripts/bundle-layers.mjs';

/**
 * Verbs built apart, each one file of its own (`dist/rye-<verb>.js`), with the lazily loaded
 * modules (scripts/bundle-layers.mjs LAZY) each needs on every run.
 */
const APART: Record<string, string[]> = {
  search: ['search-items'],
  execute: ['route', 'execute-tool'],
  load: ['load-item'],
};

/** A bins' build: the layers bundled in from their sources (scripts/bundle-layers.mjs). */
function binBuild(options: Options): Options {
  return defineConfig({
    format: ['esm'],
    dts: false,
    sourcemap: true,
    clean: false,
    target: 'node20',
    // eventsource-parser (8 KB) is bundled too: the http_client primitive's SSE decoder imports
    // it on every cold `rye execute`, and resolving it as a package cost ~5 ms, compiling it ~0.1.
    noExternal: [LAYER_IMPORT, 'eventsource-parser'],
    // Builtins are left to builtinsByRequire, with their `node:` prefix.
    removeNodeProtocol: false,
    ...options,
  }) as Options;
}

export default [
  // The API: the layers stay packages of their own, so an application that imports them too
  // shares one copy (one Executor class, one set of caches).
  { ...packageBuild(['src/index.ts']), clean: false },
  // The bins, with the layers bundled in (no package to resolve) and split by what each verb uses.
  // What the layers load on first use (yaml, the parsers, ajv, the MCP SDK) stays external: those
  // are dependencies of this package too.
  binBuild({
    entry: {
      cli: 'src/cli.ts',
      'mcp-server': 'src/mcp-server.ts',
      'thread-runner': 'src/thread-runner.ts',
      'graph-runner': 'src/graph-runner.ts',
      ...Object.fromEntries(Object.entries(LAZY).map(([name, path]) => [`rye-lazy-${name}`, path])),
    },
    splitting: true,
    esbuildPlugins: [verbsApart(Object.keys(APART)), bundleLayers, builtinsByRequire],
  }),
  // The `rye` bin's launcher, CommonJS: it starts a `rye execute`'s worker thread before node
  // sets up its ES module loader, then imports cli.js (src/launch.ts).
  binBuild({
    entry: { rye: 'src/launch.ts' },
    format: ['cjs'],
    outExtension: () => ({ js: '.cjs' }),
    splitting: false,
    sourcemap: false,
    external: ['./cli.js'],
    esbuildPlugins: [bundleLayers],
    // code-cache.ts's `import(specifier, options)` is meant to stay a runtime import.
    esbuildOptions(options) {
      options.logOverride = { ...options.logOverride, 'unsupported-dynamic-import': 'silent' };
    },
  }),
  // `rye execute` as the bin runs it: CommonJS, with this verb alone (src/cli-execute.ts), which
  // the bin compiles with V8's code cache (src/code-cache.ts). After this build its `import()`s
  // are routed through the loader (scripts/route-dynamic-imports.mjs) and the cache is made
  // (scripts/code-cache.mjs).
  binBuild({
    entry: { 'rye-execute': 'src/cli-execute.ts' },
    format: ['cjs'],
    outExtension: () => ({ js: '.cjs' }),
    splitting: false,
    define: { 'import.meta.url': '__rye_module_url' },
    // "use strict" first: it is a directive only at the very start (the ESM builds are strict).
    banner: {
      js: '"use strict";\nconst __rye_module_url = require("node:url").pathToFileURL(__filename).href;',
    },
    esbuildPlugins: [lazyFromCli(APART.execute), bundleLayers],
  }),
  // The verbs a cold start is measured on, each built alone into one file: a cold `rye search`
  // loads the CLI's start and that file (issue 12). What they load on first use comes from the
  // build above.
  ...Object.entries(APART).map(([verb, inline]) =>
    binBuild({
      entry: { [`rye-${verb}`]: `src/commands/${verb}.ts` },
      splitting: false,
      esbuildPlugins: [lazyFromCli(inline), bundleLayers, builtinsByRequire],
    }),
  ),
];
