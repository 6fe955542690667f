import { readFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { rye, tempProject } from './helpers.js';

describe('rye search and rye load', () => {
  let t: TempProject;

  beforeAll(async () => {
    t = await tempProject();
    await t.write(
      'tools/acme/files/reader.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "acme/files"\n__tool_description__ = "Read a file and count its lines"\nprint("{}")\n',
    );
    await t.write(
      'tools/acme/files/writer.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "acme/files"\n__tool_description__ = "Write text to a file"\nprint("{}")\n',
    );
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    expect((await rye(['sign', 'tool:acme/*', '--project', t.project], { env: t.env })).code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await rm(t.root, { recursive: true, force: true });
  });

  it("ranks what the user means: 'read file' gives rye/file-system/read first, compactly", async () => {
    const found = await rye(['search', 'tool', 'read file', '--project', t.project], { env: t.env });
    expect(found.code).toBe(0);
    const results = found.json.results as Record<string, unknown>[];
    expect(results[0]).toMatchObject({
      id: 'rye/file-system/read',
      ref: 'tool:rye/file-system/read',
      type: 'tool',
      source: 'system',
      signed: true,
    });
    // How to call it, without reading its source.
    expect((results[0]!.parameters as Record<string, string>).path).toMatch(/^string\b/);
    expect(results.map((r) => r.id)).toContain('acme/files/reader');
    for (const result of results) {
      for (const gone of ['metadata', 'preview', 'integrity']) expect(result).not.toHaveProperty(gone);
      // Where each one lives, so that copies of one id can be told apart.
      expect(String(result.path)).toMatch(/^\//);
    }
    expect(String(results[0]!.path)).toMatch(/tools\/rye\/file-system\/read\.js$/);
    expect(results[0]!.version).toBe('1.0.0');
    // The extractors also say "read" and "files": counted, not listed.
    expect(results.some((r) => String(r.id).startsWith('rye/core/extractors/'))).toBe(false);
    expect(found.json.hidden).toBeGreaterThanOrEqual(4);
    expect(found.json.hint).toMatch(/--all/);

    for (const flag of ['--all', '--include-internal']) {
      const all = await rye(['search', 'tool', 'read file', flag, '--project', t.project], { env: t.env });
      const listed = all.json.results as Record<string, unknown>[];
      expect(listed[0]).toMatchObject({ id: 'rye/file-system/read' });
      expect(listed).toContainEqual(
        expect.objectContaining({ id: 'rye/core/extractors/tool/tool_extractor', internal: 'extractor' }),
      );
      expect(all.json.hidden).toBeUndefined();
    }
  });

  it('searches with a query, a namespace scope and pagination', async () => {
    const all = await rye(['search', 'tool.acme.*', 'file', '--project', t.project], { env: t.env });
    expect(all.code).toBe(0);
    expect(all.json).toMatchObject({ status: 'success', total: 2 });
    const read = await rye(
      ['search', 'tool', 'read', 'AND', 'lines', '--project', t.project, '--space', 'project'],
      { env: t.env },
    );
    expect((read.json.results as { id: string; signed: boolean }[]).map((r) => [r.id, r.signed])).toEqual([
      ['acme/files/reader', true],
    ]);
    const page = await rye(
      [
        'search',
        'tool.acme.*',
        '*',
        '--limit',
        '1',
        '--offset',
        '1',
        '--sort-by',
        'name',
        '--project',
        t.project,
      ],
      {
        env: t.env,
      },
    );
    expect(page.json).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect((page.json.results as { id: string }[]).map((r) => r.id)).toEqual(['acme/files/writer']);
  });

  it('a scope without a kind is a clear error', async () => {
    const bad = await rye(['search', 'widgets', 'x', '--project', t.project], { env: t.env });
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(bad.json.error).toMatch(/scope must specify an item_type/);
  });

  it('loads a verified item, and copies a system item byte-for-byte with the hint to sign it', async () => {
    const loaded = await rye(['load', 'tool:acme/files/reader', '--project', t.project], { env: t.env });
    expect(loaded.json).toMatchObject({
      status: 'success',
      source: 'project',
      metadata: { name: 'reader', extension: '.py', version: '1.0.0' },
    });
    const copy = await rye(
      ['load', 'tool', 'rye/core/runtimes/bash/bash', '--to', 'project', '--project', t.project],
      { env: t.env },
    );
    expect(copy.json).toMatchObject({ status: 'success', source: 'system', copied_to: 'project' });
    expect(copy.json.hint).toMatch(/rye sign tool:rye\/core\/runtimes\/bash\/bash/);
    const copied = await readFile(copy.json.destination_path as string);
    const original = await readFile(copy.json.path as string);
    expect(copied.equals(original)).toBe(true);
    // Unchanged, the copy is still refused in project space until signed there (DECISIONS 12).
    const fromProject = await rye(
      ['load', 'tool:rye/core/runtimes/bash/bash', '--from', 'project', '--project', t.project],
      { env: t.env },
    );
    expect(fromProject.json).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(fromProject.json.error).toMatch(/^Untrusted key/);
  });

  it('loading a missing item or from an unknown space fails clearly', async () => {
    const missing = await rye(['load', 'tool:acme/none', '--project', t.project], { env: t.env });
    expect(missing.json).toMatchObject({
      status: 'error',
      error_type: 'not_found',
      error: 'Item not found: tool:acme/none',
    });
    const badSpace = await rye(['load', 'tool:acme/files/reader', '--from', 'moon', '--project', t.project], {
      env: t.env,
    });
    expect(badSpace.json.error).toMatch(/Unknown source 'moon'/);
  });
});
