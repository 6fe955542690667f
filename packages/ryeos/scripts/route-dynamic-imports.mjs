#!/usr/bin/env node
// Routes the `import()`s of a CommonJS bundle through a function its loader hands it: each
// `import(` becomes `dynImp(` (same length, so the source map still holds). The `rye execute`
// bundle is compiled through node:vm with V8's code cache (src/code-cache.ts), and in a function
// V8 read back from a cache, `import()` fails on node 20 ("A dynamic import callback was not
// specified"): the callback node registers belongs to the process that made the cache. Only
// real dynamic imports are rewritten (found by parsing): `import(` inside a string (the worker
// thread's boot code) stays as it is.
//   node scripts/route-dynamic-imports.mjs <bundle.cjs>
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parse } from '@babel/parser';

const IMPORT_FUNCTION = 'dynImp';

/** Every `import(...)` call's start in `program`'s tree. */
function importCalls(node, found = []) {
  // A parser that gives import() a node type of its own (Babel 8) would leave it unrouted.
  if (node.type === 'ImportExpression')
    throw new Error('route-dynamic-imports: update it for ImportExpression');
  if (node.type === 'CallExpression' && node.callee.type === 'Import') found.push(node.callee.start);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc' || !value || typeof value !== 'object') continue;
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === 'string') importCalls(child, found);
    }
  }
  return found;
}

const [path] = process.argv.slice(2);
if (!path) throw new Error('usage: route-dynamic-imports.mjs <bundle.cjs>');
const source = readFileSync(path, 'utf8');
if (source.includes(IMPORT_FUNCTION)) throw new Error(`${path} already names ${IMPORT_FUNCTION}`);
const ast = parse(source, { sourceType: 'script', allowReturnOutsideFunction: true });
const calls = importCalls(ast.program);
// The execute bundle has a dozen (lazily loaded modules, yaml, the schema validator): none found
// means the parser no longer reports them as this script expects.
if (calls.length === 0) throw new Error(`route-dynamic-imports: no import() found in ${path}`);
let routed = source;
for (const start of calls) {
  routed = routed.slice(0, start) + IMPORT_FUNCTION + routed.slice(start + 'import'.length);
}
writeFileSync(`${path}.tmp`, routed);
renameSync(`${path}.tmp`, path);
