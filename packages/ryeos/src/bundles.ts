/** The system bundles: this package's `.ai/` first, then those registered in user config (DECISIONS 22). */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SystemBundle } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { systemSpaceRoot } from './package-root.js';

export function bundlesFile(userSpace: string): string {
  return join(userSpace, '.ai', 'config', 'bundles.yaml');
}

export async function systemBundles(userSpace: string): Promise<SystemBundle[]> {
  const bundles: SystemBundle[] = [{ id: 'ryeos', root: systemSpaceRoot() }];
  const path = bundlesFile(userSpace);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return bundles;
  }
  const { parse } = await import('yaml');
  let data: { bundles?: { id?: unknown; path?: unknown }[] } | null;
  try {
    data = parse(text) as typeof data;
  } catch (error) {
    throw new RyeError('CONFIG', `Invalid ${path}: ${(error as Error).message.split('\n')[0]}`, {
      hint: 'Fix the YAML (bundles: [{id: my-bundle, path: /abs/path}]) or remove the file.',
      details: { path },
    });
  }
  const extra = (data?.bundles ?? [])
    .filter(
      (b): b is { id: string; path: string } => typeof b?.id === 'string' && typeof b?.path === 'string',
    )
    .filter((b) => b.id !== 'ryeos')
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((b) => ({ id: b.id, root: resolve(userSpace, b.path) }));
  return [...bundles, ...extra];
}
