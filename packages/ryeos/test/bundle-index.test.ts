/**
 * Each system bundle (ryeos, threads, executor) ships its signed index (`.ai/bundle.index`, made
 * by scripts/sign-bundle.mjs): it must be exactly what the bundle's items parse to today (with the
 * executor bundle's extractors), signed with the bundle key, and give the results parsing gives.
 * A changed item, parser or reader without re-signed bundles fails here.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ITEM_READERS } from '@ryeos/directives';
import type { Executor, SearchRequest, SystemBundle } from '@ryeos/executor';
import {
  BUNDLE_INDEX_SIGNATURE,
  bundleIndexPath,
  bundleIndexText,
  Executor as ExecutorClass,
  executorBundle,
  searchItems,
} from '@ryeos/executor';
import { fingerprint, signableContent } from '@ryeos/lillux';
import { threadsBundle } from '@ryeos/threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemBundles } from '../src/bundles.js';
import { packageRoot } from '../src/index.js';

const BUNDLE_KEY = join(packageRoot(), '..', '..', 'keys', 'bundle', 'public_key.pem');
const EXECUTOR_ROOT = executorBundle().root;

function indexedFiles(root: string): string[] {
  const text = signableContent(readFileSync(bundleIndexPath(root), 'utf8'), BUNDLE_INDEX_SIGNATURE);
  return Object.keys((JSON.parse(text) as { files: Record<string, unknown> }).files);
}

describe('the system bundle indexes', () => {
  let temp: string;
  let shipped: SystemBundle[];
  let copies: SystemBundle[];
  let indexed: Executor;
  let parsed: Executor;

  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'rye-bundle-index-'));
    await mkdir(join(temp, 'project'));
    await mkdir(join(temp, 'user'));
    shipped = await systemBundles(join(temp, 'user'));
    // The same bundles without their indexes: everything parsed.
    copies = [];
    for (const bundle of shipped) {
      const copy = join(temp, bundle.id);
      await cp(join(bundle.root, '.ai'), join(copy, '.ai'), {
        recursive: true,
        filter: (source) => !source.endsWith('bundle.index'),
      });
      copies.push({ id: bundle.id, root: copy });
    }
    const create = (bundles: SystemBundle[]) =>
      ExecutorClass.create({
        projectPath: join(temp, 'project'),
        userSpace: join(temp, 'user'),
        systemBundles: bundles,
        env: { PATH: process.env.PATH },
        readers: ITEM_READERS,
        metadataCacheDir: false,
      });
    indexed = await create(shipped);
    parsed = await create(copies);
  });

  afterAll(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  it("are the three layers' bundles, ryeos first", () => {
    expect(shipped.map((bundle) => bundle.id)).toEqual(['ryeos', 'ryeos-threads', 'ryeos-executor']);
    // Found without loading the threads code, and the same bundle that layer adds to a thread run.
    expect(shipped[1]).toEqual(threadsBundle());
    expect(shipped[2]).toEqual(executorBundle());
  });

  it('are current: what the items parse to today (else run node scripts/sign-bundle.mjs)', () => {
    for (const { root } of shipped) {
      const text = readFileSync(bundleIndexPath(root), 'utf8');
      const fresh = bundleIndexText(root, { readers: ITEM_READERS, extractorsRoot: EXECUTOR_ROOT });
      expect(
        signableContent(text, BUNDLE_INDEX_SIGNATURE) === fresh,
        `${bundleIndexPath(root)} is stale: run \`node scripts/sign-bundle.mjs\` after building`,
      ).toBe(true);
    }
  });

  it('are signed with the bundle key and believed', () => {
    for (const space of indexed.spaces.system) {
      expect(indexed.bundleIndexes.status(space), space.label).toMatchObject({
        status: 'ok',
        fingerprint: fingerprint(readFileSync(BUNDLE_KEY, 'utf8')),
      });
    }
    for (const space of parsed.spaces.system)
      expect(parsed.bundleIndexes.status(space).status).toBe('absent');
  });

  it('cover every item, each in the bundle of the layer that resolves it', () => {
    const [ryeos, threads, executor] = shipped.map((bundle) => indexedFiles(bundle.root));
    for (const rel of [
      'tools/rye/bash.js',
      'tools/rye/file-system/read.js',
      'tools/rye/core/runtimes/mcp/stdio.yaml',
      'directives/init.md',
      'knowledge/rye/core/overview.md',
    ]) {
      expect(ryeos).toContain(rel);
    }
    for (const rel of [
      'tools/rye/agent/providers/anthropic.yaml',
      'tools/rye/agent/threads/orchestrator.js',
      'knowledge/rye/agent/core/DirectiveInstruction.md',
    ]) {
      expect(threads).toContain(rel);
    }
    for (const rel of [
      'tools/rye/core/runtimes/node/node.yaml',
      'tools/rye/core/runtimes/python/script.yaml',
      'tools/rye/core/primitives/subprocess.yaml',
      'tools/rye/core/extractors/tool/tool_extractor.yaml',
    ]) {
      expect(executor).toContain(rel);
    }
    // One source: no file ships in two bundles.
    const all = [...ryeos!, ...threads!, ...executor!];
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBeGreaterThan(50);
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
      const within = (response: typeof a, bundles: SystemBundle[]) => ({
        ...response,
        results: response.results.map((r) => {
          const bundle = bundles.find((b) => !relative(b.root, r.path).startsWith('..'));
          return { ...r, path: `${bundle?.id}:${relative(bundle?.root ?? '/', r.path)}` };
        }),
      });
      expect(within(a, shipped), JSON.stringify(request)).toEqual(within(b, copies));
      expect(a.total).toBeGreaterThan(0);
    }
    const dry = (executor: Executor) =>
      executor.executeTool('rye/file-system/read', { path: 'x' }, { dryRun: true });
    const [a, b] = await Promise.all([dry(indexed), dry(parsed)]);
    expect(a.status).toBe('validation_passed');
    expect({ ...a, chain_detail: undefined }).toEqual({ ...b, chain_detail: undefined });
  });
});
