#!/usr/bin/env node
// Fails when modules inside one package's src import each other in a circle, type-only imports
// included: a circle makes load order fragile and turns its modules into one unit.
// Cross-package direction is check-layers.mjs's job.
// Usage: node scripts/check-cycles.mjs [packagesDir]   (default: ./packages)
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cruise } from 'dependency-cruiser';

const RULE = 'no-circle-in-package';

function sourceDirs(packagesDir) {
  return readdirSync(packagesDir)
    .filter((name) => existsSync(join(packagesDir, name, 'src')))
    .map((name) => `${name}/src`);
}

// One circle is reported once per edge on it: rotate each to start at its smallest path so the
// copies compare equal.
function canonical(circle) {
  const start = circle.indexOf([...circle].sort()[0]);
  return [...circle.slice(start), ...circle.slice(0, start)];
}

export async function findCircles(packagesDir) {
  const baseDir = resolve(packagesDir);
  const dirs = sourceDirs(baseDir);
  if (dirs.length === 0) return [];
  const { output } = await cruise(dirs, {
    baseDir,
    // Type-only imports count: the compiler and the reader follow them all the same.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    validate: true,
    ruleSet: {
      forbidden: [
        {
          name: RULE,
          severity: 'error',
          from: { path: '^([^/]+)/src/' },
          to: { circular: true, path: '^$1/src/' },
        },
      ],
    },
  });
  const circles = new Map();
  for (const violation of output.summary.violations) {
    if (violation.rule.name !== RULE) continue;
    const circle = canonical([violation.from, ...violation.cycle.map((step) => step.name)].slice(0, -1));
    circles.set(circle.join(' → '), circle);
  }
  return [...circles.values()];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const packagesDir = process.argv[2] ?? 'packages';
  const circles = await findCircles(packagesDir);
  for (const circle of circles) {
    const paths = [...circle, circle[0]].map((module) => join(packagesDir, module));
    console.error(`import circle: ${paths.join(' → ')}`);
  }
  if (circles.length > 0) {
    console.error(
      `${circles.length} import circle(s) inside a package: move the piece both sides need into a module of its own`,
    );
    process.exit(1);
  }
}
