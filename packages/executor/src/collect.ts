/**
 * Which files under a type directory count as items when a folder is walked (a sign glob): the
 * kind's extensions, no name starting `.` or `_`, nothing inside `node_modules`/`__pycache__` or
 * the bundler's `collect.yaml` `exclude_dirs`, and no `package.json`, lock file or
 * `exclude_files` entry (interfaces §2.1 and §2.4: upstream treated `package.json` as a tool).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseYamlDocument } from './parsers/yaml.js';
import type { Spaces } from './spaces.js';

export const DEFAULT_EXCLUDE_DIRS: readonly string[] = ['node_modules', '__pycache__'];
export const DEFAULT_EXCLUDE_FILES: readonly string[] = [
  'package.json',
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
];
const COLLECT_PATH = ['tools', 'rye', 'core', 'bundler', 'collect.yaml'];

export interface CollectExcludes {
  dirs: ReadonlySet<string>;
  files: ReadonlySet<string>;
}

function asList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The built-in excludes plus the first `collect.yaml` found (project → user → system). */
export function collectExcludes(spaces: Spaces): CollectExcludes {
  const dirs = new Set(DEFAULT_EXCLUDE_DIRS);
  const files = new Set(DEFAULT_EXCLUDE_FILES);
  for (const space of spaces.ordered()) {
    const path = join(space.base, '.ai', ...COLLECT_PATH);
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) continue;
    try {
      const data = parseYamlDocument(readFileSync(path, 'utf8'), path);
      for (const name of asList(data.exclude_dirs)) dirs.add(name);
      for (const name of asList(data.exclude_files)) files.add(name);
    } catch {
      // A broken collect.yaml leaves the built-in excludes (it can only exclude, never add).
    }
    break;
  }
  return { dirs, files };
}

/** Whether a directory entry is walked into (directories) or considered (files). */
export function isCollected(name: string, isDirectory: boolean, excludes: CollectExcludes): boolean {
  if (name.startsWith('.') || name.startsWith('_')) return false;
  return isDirectory ? !excludes.dirs.has(name) : !excludes.files.has(name);
}
