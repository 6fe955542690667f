/** Helpers of the tests that look at the packages as published and at the repository around them. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** The repository root (this file is packages/ryeos/test/package-helpers.ts). */
export const REPO = join(import.meta.dirname, '..', '..', '..');

/** The published packages whose README example is installed and run alone, by directory under packages/. */
export const PACKAGE_DIRS = [
  'lillux',
  'executor',
  'directives',
  'threads',
  'mcp',
  'ryeos',
  'store-postgres',
  'worker',
] as const;

/**
 * How to run pnpm here: the pnpm running this test run when it is pnpm, else `pnpm` on PATH (as
 * under `npx -y pnpm@… test`), else through npx.
 */
export function pnpmCommand(): [string, string[]] {
  const exec = process.env.npm_execpath;
  if (exec && /pnpm\.c?js$/.test(exec)) return [process.execPath, [exec]];
  if (spawnSync('pnpm', ['--version'], { stdio: 'ignore' }).status === 0) return ['pnpm', []];
  return ['npx', ['-y', 'pnpm@10.34.8']];
}

export type { Run } from './helpers.js';
export { runCommand } from './helpers.js';

/** `git status --porcelain` of the repository (untracked files included). */
export function gitStatus(): string {
  const result = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git status failed: ${result.stderr}`);
  return result.stdout;
}
