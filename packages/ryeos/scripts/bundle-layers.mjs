// How the `rye` and `ryeos-mcp` bins bundle the layers (lillux, executor, directives, threads,
// mcp): from their sources, and each import only of the modules that define the names it
// imports. esbuild splits code by module, following static imports, and a layer's index
// re-exports everything: importing `searchItems` from '@ryeos/executor' through it would load
// the chain runner, the subprocess and HTTP primitives and signing too (and node:child_process).
// So `import { a, b } from '@ryeos/executor'` becomes a small module of
// `export { a } from '<the file index.ts takes a from>'`. A layer's index holds named re-exports
// only (design.md); an import this cannot map (a namespace import, `import()`, a name the index
// does not re-export) takes the whole index, as without this plugin.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = fileURLToPath(new URL('../..', import.meta.url));
export const LAYERS = ['lillux', 'executor', 'directives', 'threads', 'mcp'];
/** `@ryeos/<layer>` or `@ryeos/<layer>/<subpath>`. */
export const LAYER_IMPORT = new RegExp(`^@ryeos/(${LAYERS.join('|')})(/[a-z-]+)?$`);
const NAMESPACE = 'ryeos-layer';
const NAMED = /(?:import|export)\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g;

/** Names of a `{ a, b as c, type d }` list that are values: `[imported, local]` pairs. */
function specifiers(list) {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part && !part.startsWith('type '))
    .map((part) => {
      const [name, alias] = part.split(/\s+as\s+/);
      return [name.trim(), (alias ?? name).trim()];
    });
}

function sourceFile(path) {
  return path.endsWith('.js') ? `${path.slice(0, -3)}.ts` : path;
}

const exportMaps = new Map();

/** A layer entry's value re-exports: exported name → [module path or '@ryeos/…', its own name]. */
function exportsOf(entry) {
  let map = exportMaps.get(entry);
  if (!map) {
    map = new Map();
    for (const [, type, list, from] of readFileSync(entry, 'utf8').matchAll(NAMED)) {
      if (type) continue;
      const target = from.startsWith('.') ? sourceFile(resolve(dirname(entry), from)) : from;
      for (const [name, exported] of specifiers(list)) map.set(exported, [target, name]);
    }
    exportMaps.set(entry, map);
  }
  return map;
}

function entryOf(layer, subpath) {
  return join(PACKAGES, layer, 'src', `${subpath ? subpath.slice(1) : 'index'}.ts`);
}

/** The value names `importer` imports from `specifier`, or undefined when they cannot be told. */
function importedNames(importer, specifier) {
  let text;
  try {
    text = readFileSync(importer, 'utf8');
  } catch {
    return undefined;
  }
  const names = [];
  for (const [, type, list, from] of text.matchAll(NAMED)) {
    if (from !== specifier || type) continue;
    for (const [name] of specifiers(list)) names.push(name);
  }
  // Another form of import of the same layer (namespace, default, side effect): take it whole.
  const quoted = `'${specifier}'`;
  const named = [...text.matchAll(NAMED)].filter(([, , , from]) => from === specifier).length;
  if (text.split(quoted).length - 1 !== named) return undefined;
  return names;
}

function inLayer(path) {
  return LAYERS.some((name) => path.startsWith(`${PACKAGES}${name}${sep}src${sep}`));
}

/** @type {import('esbuild').Plugin} */
export const bundleLayers = {
  name: 'ryeos-bundle-layers',
  setup(build) {
    build.onResolve({ filter: LAYER_IMPORT }, (args) => {
      const [, layer, subpath] = LAYER_IMPORT.exec(args.path);
      const entry = entryOf(layer, subpath);
      const whole = { path: entry, sideEffects: false };
      if (subpath || args.kind !== 'import-statement') return whole;
      const importer = args.namespace === NAMESPACE ? undefined : args.importer;
      const names = importer ? importedNames(importer, args.path) : undefined;
      const map = exportsOf(entry);
      if (!names || names.length === 0 || names.some((name) => !map.has(name))) return whole;
      return { path: `${layer}:${[...new Set(names)].sort().join(',')}`, namespace: NAMESPACE };
    });
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
      const [layer, list] = args.path.split(':');
      const map = exportsOf(entryOf(layer));
      const lines = list.split(',').map((name) => {
        const [target, own] = map.get(name);
        const spec = own === name ? name : `${own} as ${name}`;
        // Another layer's name (re-exported by this one) is resolved the whole way again.
        return `export { ${spec} } from ${JSON.stringify(target)};`;
      });
      return { contents: `${lines.join('\n')}\n`, loader: 'js', resolveDir: join(PACKAGES, layer, 'src') };
    });
    // The layers' own modules are free of side effects, as their package.json files declare.
    build.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData === bundleLayers || !inLayer(args.importer)) return undefined;
      const result = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: bundleLayers,
      });
      return result.errors.length ? result : { ...result, sideEffects: false };
    });
  },
};

/**
 * Leaves the given verbs out of the CLI's bundle: `import('../commands/<verb>.js')` in cli/run.ts
 * loads `./rye-<verb>.js`, a bundle built apart (tsup.config.ts).
 * @param {string[]} verbs
 * @returns {import('esbuild').Plugin}
 */
export function verbsApart(verbs) {
  const filter = new RegExp(`^\\.\\./commands/(${verbs.join('|')})\\.js$`);
  return {
    name: 'ryeos-verbs-apart',
    setup(build) {
      build.onResolve({ filter }, (args) => {
        if (!args.importer.endsWith(`${sep}cli${sep}run.ts`)) return undefined;
        return { path: `./rye-${filter.exec(args.path)[1]}.js`, external: true };
      });
    },
  };
}

/**
 * Modules a verb loads on first use (`import('./execute/route.js')`…), built once as named entries
 * of the CLI's build (`dist/rye-lazy-<name>.js`): a verb built apart imports them from there, so
 * it is one file of its own, with nothing shared to split out.
 */
export const LAZY = {
  route: join(PACKAGES, 'ryeos', 'src', 'execute', 'route.ts'),
  fork: join(PACKAGES, 'ryeos', 'src', 'execute', 'fork.ts'),
  detach: join(PACKAGES, 'ryeos', 'src', 'execute', 'detach.ts'),
  'threads-tail': join(PACKAGES, 'ryeos', 'src', 'commands', 'threads-tail.ts'),
  sign: join(PACKAGES, 'ryeos', 'src', 'sign.ts'),
  keys: join(PACKAGES, 'ryeos', 'src', 'keys.ts'),
  'execute-tool': join(PACKAGES, 'executor', 'src', 'execute-tool.ts'),
  'search-items': join(PACKAGES, 'ryeos', 'src', 'search-items.ts'),
  'load-item': join(PACKAGES, 'ryeos', 'src', 'load-item.ts'),
  'remote-target': join(PACKAGES, 'ryeos', 'src', 'execute', 'remote-target.ts'),
  'remote-actions': join(PACKAGES, 'ryeos', 'src', 'remote', 'actions.ts'),
  'remote-add': join(PACKAGES, 'ryeos', 'src', 'remote', 'add.ts'),
  // Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT asks for an export.
  'tracing-otlp': join(PACKAGES, 'lillux', 'src', 'tracing-otlp.ts'),
};

/**
 * For a verb built apart: its `import()`s of the lazily loaded modules above load the CLI build's
 * `rye-lazy-<name>.js`, except those named in `inline`, which the verb needs on every run and
 * bundles (the execute verb: route and execute-tool); any other relative `import()` fails the
 * build (it would be inlined unnoticed).
 * @param {string[]} [inline]
 * @returns {import('esbuild').Plugin}
 */
export function lazyFromCli(inline = []) {
  return {
    name: 'ryeos-lazy-from-cli',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        const source = sourceFile(resolve(args.resolveDir, args.path));
        const name = Object.keys(LAZY).find((key) => LAZY[key] === source);
        if (!name) {
          return { errors: [{ text: `import('${args.path}') is not in LAZY (scripts/bundle-layers.mjs)` }] };
        }
        return inline.includes(name) ? undefined : { path: `./rye-lazy-${name}.js`, external: true };
      });
    },
  };
}
