#!/usr/bin/env node
// Fails when a package imports a layer above it (design.md: lower never imports higher).
// Usage: node scripts/check-layers.mjs [packagesDir]   (default: ./packages)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const LAYERS = [
  '@ryeos/lillux',
  '@ryeos/executor',
  '@ryeos/directives',
  '@ryeos/threads',
  '@ryeos/store-postgres',
  '@ryeos/worker',
  '@ryeos/mcp',
  'ryeos',
  '@ryeos/remote',
];
// @ryeos/mcp is an adapter over the MCP SDK: of the ryeos layers it may use only lillux, which
// owns the four operations' schemas it serves.
// @ryeos/store-postgres is a ThreadStore for @ryeos/threads: it may use threads (the interface it
// implements) and lillux (its errors), never executor or directives.
// @ryeos/worker is the run queue: it knows the store's heartbeats, never what a job runs (the
// facade's `rye worker` hands it the handler).
const ISOLATED = new Map([
  ['@ryeos/mcp', new Set(['@ryeos/lillux'])],
  ['@ryeos/store-postgres', new Set(['@ryeos/lillux', '@ryeos/threads'])],
  ['@ryeos/worker', new Set(['@ryeos/lillux', '@ryeos/store-postgres'])],
]);

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;

function packageOf(specifier) {
  if (specifier === 'ryeos' || specifier.startsWith('ryeos/')) return 'ryeos';
  const match = /^(@ryeos\/[^/]+)/.exec(specifier);
  return match ? match[1] : undefined;
}

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(c|m)?(t|j)sx?$/.test(entry) && !entry.endsWith('.d.ts')) yield path;
  }
}

export function checkLayers(packagesDir) {
  const violations = [];
  for (const dir of readdirSync(packagesDir)) {
    const manifestPath = join(packagesDir, dir, 'package.json');
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    } catch {
      continue;
    }
    const self = manifest.name;
    const rank = LAYERS.indexOf(self);
    if (rank === -1) continue;
    const allowed = (target) =>
      target === self ||
      (ISOLATED.has(self)
        ? ISOLATED.get(self).has(target)
        : LAYERS.indexOf(target) !== -1 && LAYERS.indexOf(target) < rank);
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      if (LAYERS.includes(dep) && !allowed(dep)) {
        violations.push(
          `${relative(process.cwd(), manifestPath)}: ${self} depends on ${dep}, a layer it may not use`,
        );
      }
    }
    const src = join(packagesDir, dir, 'src');
    try {
      statSync(src);
    } catch {
      continue;
    }
    for (const file of sourceFiles(src)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(IMPORT)) {
        const target = packageOf(match[1]);
        if (target && !allowed(target)) {
          const line = text.slice(0, match.index).split('\n').length;
          violations.push(
            `${relative(process.cwd(), file)}:${line}: ${self} imports ${match[1]} (layer order: ${LAYERS.join(' < ')})`,
          );
        }
      }
    }
  }
  return violations;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2] ?? join(process.cwd(), 'packages');
  const violations = checkLayers(dir);
  if (violations.length) {
    console.error(
      `Layering check failed (${violations.length}):\n${violations.map((v) => `  ${v}`).join('\n')}`,
    );
    process.exit(1);
  }
  console.error('Layering check passed.');
}
