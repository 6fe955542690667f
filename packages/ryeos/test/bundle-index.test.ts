/**
 * The system bundle ships its signed index (`.ai/bundle.index`, made by scripts/sign-bundle.mjs):
 * it must be exactly what the bundle's items parse to today, signed with the bundle key, and give
 * the results parsing gives. A changed item, parser or reader without a re-signed bundle fails here.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ITEM_READERS } from '@ryeos/directives';
import type { Executor, SearchRequest } from '@ryeos/executor';
import {
  BUNDLE_INDEX_SIGNATURE,
  bundleIndexPath,
  bundleIndexText,
  Executor as ExecutorClass,
  searchItems,
} from '@ryeos/executor';
import { fingerprint, signableContent } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/index.js';

const ROOT = packageRoot();
const BUNDLE_KEY = join(ROOT, '..', '..', 'keys', 'bundle', 'public_key.pem');

describe('the system bundle index', () => {
  let temp: string;
  let indexed: Executor;
  let parsed: Executor;

  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'rye-bundle-index-'));
    // The same bundle without its index: everything parsed.
    const copy = join(temp, 'bundle');
    await cp(join(ROOT, '.ai'), join(copy, '.ai'), {
      recursive: true,
      filter: (source) => !source.endsWith('bundle.index'),
    });
    await mkdir(join(temp, 'project'));
    await mkdir(join(temp, 'user'));
    const create = (root: string) =>
      ExecutorClass.create({
        projectPath: join(temp, 'project'),
        userSpace: join(temp, 'user'),
        systemBundles: [{ id: 'ryeos', root }],
        env: { PATH: process.env.PATH },
        readers: ITEM_READERS,
        metadataCacheDir: false,
      });
    indexed = await create(ROOT);
    parsed = await create(copy);
  });

  afterAll(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  it('is current: what the items parse to today (else run node scripts/sign-bundle.mjs)', () => {
    const shipped = readFileSync(bundleIndexPath(ROOT), 'utf8');
    const fresh = bundleIndexText(ROOT, { readers: ITEM_READERS });
    expect(
      signableContent(shipped, BUNDLE_INDEX_SIGNATURE) === fresh,
      'packages/ryeos/.ai/bundle.index is stale: run `node scripts/sign-bundle.mjs` after building',
    ).toBe(true);
  });

  it('is signed with the bundle key and believed', () => {
    const status = indexed.bundleIndexes.status(indexed.spaces.system[0]!);
    expect(status).toMatchObject({
      status: 'ok',
      fingerprint: fingerprint(readFileSync(BUNDLE_KEY, 'utf8')),
    });
    expect(parsed.bundleIndexes.status(parsed.spaces.system[0]!).status).toBe('absent');
  });

  it('covers every item of the bundle', () => {
    const text = signableContent(readFileSync(bundleIndexPath(ROOT), 'utf8'), BUNDLE_INDEX_SIGNATURE);
    const files = Object.keys((JSON.parse(text) as { files: Record<string, unknown> }).files);
    for (const rel of [
      'tools/rye/bash.js',
      'tools/rye/file-system/read.js',
      'tools/rye/core/runtimes/node/node.yaml',
      'tools/rye/core/extractors/tool/tool_extractor.yaml',
      'directives/init.md',
      'knowledge/rye/core/overview.md',
    ]) {
      expect(files).toContain(rel);
    }
    expect(files.length).toBeGreaterThan(40);
  });

  it('gives the results of parsing, for every kind', async () => {
    const requests: SearchRequest[] = [
      { scope: 'tool', query: 'read file' },
      { scope: 'tool', query: '*', include_internal: true, limit: 100 },
      { scope: 'directive', query: '*', limit: 100 },
      { scope: 'knowledge', query: 'signing', limit: 100 },
      { scope: 'knowledge', query: '*', sort_by: 'date', limit: 100 },
    ];
    for (const request of requests) {
      const [a, b] = await Promise.all([searchItems(indexed, request), searchItems(parsed, request)]);
      // The two bundles lie in different folders: each result's path is compared inside its own.
      const within = (response: typeof a, root: string) => ({
        ...response,
        results: response.results.map((r) => ({ ...r, path: relative(root, r.path) })),
      });
      expect(within(a, ROOT), JSON.stringify(request)).toEqual(within(b, join(temp, 'bundle')));
      expect(a.total).toBeGreaterThan(0);
    }
    const dry = (executor: Executor) =>
      executor.executeTool('rye/file-system/read', { path: 'x' }, { dryRun: true });
    const [a, b] = await Promise.all([dry(indexed), dry(parsed)]);
    expect(a.status).toBe('validation_passed');
    expect({ ...a, chain_detail: undefined }).toEqual({ ...b, chain_detail: undefined });
  });
});
