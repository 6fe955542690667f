/**
 * The system bundles: this package's `.ai/` first (the root of `{system_space}`), then the
 * layers' own (threads, executor), then those registered in user config (DECISIONS 22).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { SystemBundle } from '@ryeos/executor';
import { executorBundle } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { systemSpaceRoot } from './package-root.js';

/**
 * The threads layer's bundle (`threadsBundle()` of @ryeos/threads), found from its package.json
 * so that listing the bundles never loads the threads code.
 */
export function threadsLayerBundle(): SystemBundle {
  const manifest = createRequire(import.meta.url).resolve('@ryeos/threads/package.json');
  return { id: 'ryeos-threads', root: dirname(manifest) };
}

export function bundlesFile(userSpace: string): string {
  return join(userSpace, '.ai', 'config', 'bundles.yaml');
}

export async function systemBundles(userSpace: string): Promise<SystemBundle[]> {
  const bundles: SystemBundle[] = [
    { id: 'ryeos', root: systemSpaceRoot() },
    threadsLayerBundle(),
    executorBundle(),
  ];
  const shipped = new Set(bundles.map((bundle) => bundle.id));
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
    .filter((b) => !shipped.has(b.id))
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((b) => ({ id: b.id, root: resolve(userSpace, b.path) }));
  return [...bundles, ...extra];
}
