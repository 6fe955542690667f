/**
 * Search ranks what a user means against the shipped system bundles (issue 11): exact names and
 * id segments before descriptions, tools that cannot be executed on their own hidden unless asked
 * for. Moved from the executor's tests: the facade's tools live in this package's bundle.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Executor, searchItems } from '@ryeos/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemBundles } from '../src/bundles.js';

const ids = (response: { results: { id: string }[] }) => response.results.map((r) => r.id);

describe('search against the shipped system bundle', () => {
  let root: string;
  let executor: Executor;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rye-search-rank-'));
    await mkdir(join(root, 'project', '.ai'), { recursive: true });
    await mkdir(join(root, 'user', '.ai'), { recursive: true });
    executor = await Executor.create({
      projectPath: join(root, 'project'),
      userSpace: join(root, 'user'),
      systemBundles: await systemBundles(join(root, 'user')),
      env: { PATH: process.env.PATH },
      metadataCacheDir: false,
    });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("'read file' puts rye/file-system/read first, with its parameters", async () => {
    const found = await searchItems(executor, { scope: 'tool', query: 'read file' });
    expect(found.results[0]).toMatchObject({
      id: 'rye/file-system/read',
      ref: 'tool:rye/file-system/read',
      source: 'system',
      signed: true,
    });
    expect(found.results[0]!.parameters!.path).toMatch(/^string\b.*— File to read/);
    // The extractors say "read" and "files" in their descriptions: not tools to call.
    expect(ids(found).some((id) => id.startsWith('rye/core/'))).toBe(false);
    expect(found.hidden).toBeGreaterThanOrEqual(4);
  });

  it('finds a tool by its id, and its namespace by a segment', async () => {
    const byId = await searchItems(executor, { scope: 'tool', query: 'rye/file-system/read' });
    expect(byId.results[0]).toMatchObject({ id: 'rye/file-system/read', score: 1 });
    const bySegment = await searchItems(executor, { scope: 'tool', query: 'file-system', limit: 100 });
    expect(new Set(bySegment.results.map((r) => r.category))).toEqual(new Set(['rye/file-system']));
    expect(bySegment.results.every((r) => r.score === 0.9)).toBe(true);
  });

  it('lists no runtime, primitive, extractor or runtime library unless asked', async () => {
    const visible = ids(await searchItems(executor, { scope: 'tool', limit: 1000 }));
    expect(visible).toContain('rye/bash');
    expect(visible).toContain('rye/core/keys/keys');
    for (const id of visible) expect(id).not.toMatch(/^rye\/core\/(runtimes|primitives|extractors)\//);

    const all = await searchItems(executor, { scope: 'tool', limit: 1000, include_internal: true });
    const reasons = Object.fromEntries(all.results.map((r) => [r.id, r.internal]));
    expect(reasons).toMatchObject({
      'rye/core/runtimes/node/node': 'runtime',
      'rye/core/runtimes/node/lib/launch': 'library',
      'rye/core/primitives/subprocess': 'primitive',
      'rye/core/extractors/tool/tool_extractor': 'extractor',
      'rye/bash': undefined,
    });
    expect(all.hidden).toBeUndefined();
    expect(all.total - visible.length).toBe(
      (await searchItems(executor, { scope: 'tool', limit: 0 })).hidden,
    );
  });
});
