#!/usr/bin/env node
// Keeps every function in the runner's packages short enough to read in one
// screen (issue 30, point 6). Counts the lines a function spans, from its
// first line to its closing brace, nested functions included in their parent.
// Usage: node scripts/check-function-length.mjs [--list N]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHECKED = ['packages/threads/src', 'packages/executor/src'];
const LIMIT = 120;

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function functionName(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && ts.isPrivateIdentifier(node.name)) return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

function functionsIn(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({
        file: relative(ROOT, file),
        line: start + 1,
        name: functionName(node),
        lines: end - start + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const all = CHECKED.flatMap((dir) => sourceFiles(join(ROOT, dir)).flatMap(functionsIn));
const listIndex = process.argv.indexOf('--list');
if (listIndex !== -1) {
  const count = Number(process.argv[listIndex + 1] ?? 10);
  for (const pkg of CHECKED) {
    const largest = all
      .filter((f) => f.file.startsWith(pkg))
      .sort((a, b) => b.lines - a.lines)
      .slice(0, count);
    console.log(`${pkg}:`);
    for (const f of largest) console.log(`  ${String(f.lines).padStart(4)}  ${f.name}  ${f.file}:${f.line}`);
  }
}
const tooLong = all.filter((f) => f.lines > LIMIT);
if (tooLong.length > 0) {
  console.error(`check-function-length: ${tooLong.length} function(s) over ${LIMIT} lines:`);
  for (const f of tooLong) console.error(`  ${f.file}:${f.line}  ${f.name}  ${f.lines} lines`);
  console.error('Split each into named steps (one job per function), then run this again.');
  process.exit(1);
}
console.log(
  `check-function-length: ${all.length} functions in ${CHECKED.join(', ')}, none over ${LIMIT} lines.`,
);
