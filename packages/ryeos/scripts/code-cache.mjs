#!/usr/bin/env node
// Makes `dist/rye-execute.cjs.cache`: V8's code cache of the `rye execute` bundle, which the bin
// loads instead of compiling the bundle (src/code-cache.ts). The cache holds what one real run
// compiled: a signed function-style tool of a temporary project, run by the built bin (its
// parameter schema makes the bundle import its validator: the routed import() is run too). Then a
// second run checks that V8 takes the cache. Runs after every build; a failure fails the build.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', 'dist', 'rye.cjs');
const hook = join(here, 'code-cache-hook.cjs');

const TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'build';
export const __tool_description__ = 'Echo n';
export const CONFIG_SCHEMA = { type: 'object', properties: { n: { type: 'integer' } } };
export async function execute(params) {
  return { success: true, n: params.n ?? 0 };
}
`;

const root = mkdtempSync(join(tmpdir(), 'rye-code-cache-'));
try {
  const project = join(root, 'project');
  const user = join(root, 'user');
  mkdirSync(join(project, '.ai', 'tools', 'build'), { recursive: true });
  mkdirSync(user);
  writeFileSync(join(project, '.ai', 'tools', 'build', 'echo.js'), TOOL);
  // No NODE_OPTIONS: V8 flags of the build's own would make a cache no plain run can use.
  const env = { PATH: process.env.PATH, HOME: user, USER_SPACE: user };
  const rye = (args, codeCache) => {
    const run = spawnSync(process.execPath, [...(codeCache ? ['--require', hook] : []), bin, ...args], {
      cwd: project,
      env: { ...env, ...(codeCache ? { CODE_CACHE: codeCache } : {}) },
      encoding: 'utf8',
    });
    if (run.status !== 0)
      throw new Error(`rye ${args.join(' ')} exited ${run.status}:\n${run.stdout}${run.stderr}`);
    return run;
  };
  rye(['keys', 'generate']);
  rye(['sign', 'tool:build/echo']);
  const call = ['execute', 'tool:build/echo', '--params', '{"n":1}'];
  rye(call, 'save');
  const check = rye(call, 'report');
  if (JSON.parse(check.stdout).data?.n !== 1) throw new Error(`unexpected answer: ${check.stdout}`);
  const report = /code-cache: (.*)/.exec(check.stderr)?.[1];
  if (!report || JSON.parse(report).rejected !== false) {
    throw new Error(`the code cache was not taken (${report ?? 'no report'}):\n${check.stderr}`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
