// How the bins import node's own modules: through `require`, not as ES modules. Node builds an
// ES module facade of a builtin by reading every export, and reading one runs its lazy getter:
// `import { createHash } from 'node:crypto'` loads WebCrypto (measured: 6.5 ms on a cold start),
// `import { readFileSync } from 'node:fs'` runs the `fs.promises` getter (3.3 ms in all).
// `require` returns the module object as it is. Each builtin becomes a small module that exports
// its properties; only those an importer names are kept and read, when the bin starts. A name the
// building node does not have fails the build, as an ES import would fail to link.
import { createRequire, isBuiltin } from 'node:module';

const require = createRequire(import.meta.url);
const NAMESPACE = 'ryeos-builtin';
// Imported as an ES module still: `createRequire` comes from it (its facade costs ~0.6 ms).
const KEPT = new Set(['module', 'node:module']);

/** @type {import('esbuild').Plugin} */
export const builtinsByRequire = {
  name: 'ryeos-builtins-by-require',
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      if (args.kind !== 'import-statement' || !isBuiltin(args.path) || KEPT.has(args.path)) return undefined;
      const name = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      return { path: name, namespace: NAMESPACE, sideEffects: false };
    });
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
      // Keys only: listing them does not run a getter. Each export is a pure call, so esbuild
      // drops the ones no importer uses and their getters never run.
      const keys = Object.keys(require(args.path)).filter(
        (key) => key !== 'default' && /^[A-Za-z_$][\w$]*$/.test(key),
      );
      const lines = [
        `import { createRequire } from 'node:module';`,
        `const $builtin = createRequire(import.meta.url)(${JSON.stringify(args.path)});`,
        `const $read = (key) => $builtin[key];`,
        ...keys.map((key) => `export const ${key} = /* @__PURE__ */ $read(${JSON.stringify(key)});`),
        'export default $builtin;',
      ];
      return { contents: `${lines.join('\n')}\n`, loader: 'js' };
    });
  },
};
