import { existsSync } from 'node:fs';
import { appendFile, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, RyeError } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../src/executor.js';
import type { SearchableFields, SearchReader, SearchRequest, SearchScope } from '../src/search/index.js';
import { SCOPE_ERROR, searchItems } from '../src/search/index.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace, trust } from './helpers/workspace.js';

function py(category: string, description: string, extra = ''): string {
  return `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "${category}"
__tool_description__ = "${description}"
${extra}`;
}

function yamlTool(category: string, description: string, extra = ''): string {
  return `version: "1.0.0"
tool_type: python
executor_id: rye/core/runtimes/python/script
category: ${category}
description: "${description}"
${extra}`;
}

const ids = (response: { results: { id: string }[] }) => response.results.map((r) => r.id).sort();

describe('search', () => {
  let ws: Workspace;
  let executor: Executor;
  // Scopes are plain strings here, bad ones too: the executor checks them at run time.
  const search = (
    request: Partial<Omit<SearchRequest, 'scope'>> & { scope: string },
    readers?: Record<string, SearchReader>,
  ) =>
    searchItems(
      // Readers are registered with the executor; a test swaps them on a copy of its context.
      readers
        ? {
            ...executor,
            kinds: executor.kinds,
            readers: Object.fromEntries(Object.entries(readers).map(([k, search]) => [k, { search }])),
          }
        : executor,
      { limit: 100, ...request, scope: request.scope as SearchScope },
    );

  beforeAll(async () => {
    ws = await createWorkspace();
    // Query features.
    await ws.write('project', 'tools/q/file_reader.py', py('q', 'Read the contents of a file from disk'));
    await ws.write('project', 'tools/q/file_writer.py', py('q', 'Write text into a file'));
    await ws.write('project', 'tools/q/web_search.py', py('q', 'Search the web for pages'));
    await ws.write('project', 'tools/q/thread_list.py', py('q', 'List running threads'));
    await ws.write('project', 'tools/q/profile.py', py('q', 'Show the user profile'));
    await ws.write('project', 'tools/q/web-fetch.py', py('q', 'Fetch a URL'));
    await ws.write('project', 'tools/q/greek.py', py('q', 'alpha beta gamma delta epsilon zeta eta theta'));
    // Scopes.
    await ws.write('project', 'tools/rye/core-x/thing.py', py('rye/core-x', 'Not in rye core'));
    await ws.write('project', 'tools/rye/core/mine.py', py('rye/core', 'Project tool in rye core'));
    // Filters and sorting.
    await ws.write(
      'project',
      'tools/f/one.yaml',
      yamlTool('f', 'First', 'tags: [web, net]\nauthor: alice\ncreated_at: "2024-01-10T00:00:00Z"'),
    );
    await ws.write(
      'project',
      'tools/f/two.yaml',
      yamlTool('f', 'Second', 'tags: [cli]\nauthor: bob\ncreated_at: "2024-06-01T00:00:00Z"').replace(
        'version: "1.0.0"',
        'version: "2.1.0"',
      ),
    );
    await ws.write('project', 'tools/f/Three.yaml', yamlTool('f', 'Third', 'tags: [web]\nauthor: carol'));
    // Shadowing across the three spaces.
    await ws.write('project', 'tools/s/dup.py', py('s', 'project copy'));
    await ws.write('user', 'tools/s/dup.py', py('s', 'user copy'));
    await ws.write('system', 'tools/s/dup.py', py('s', 'system copy'));
    await ws.write('user', 'tools/s/two.py', py('s', 'user two'));
    await ws.write('system', 'tools/s/two.py', py('s', 'system two'));
    await ws.write('system', 'tools/s/sys.py', py('s', 'system only'));
    // Only the kind's extensions, no private or hidden files, no excluded names.
    await ws.write('project', 'tools/pkg/real.py', py('pkg', 'A real tool'));
    for (const junk of [
      'tools/pkg/package.json',
      'tools/pkg/README.md',
      'tools/pkg/notes.txt',
      'tools/pkg/_private.py',
      'tools/pkg/.hidden.py',
      'tools/pkg/node_modules/dep/index.js',
      'tools/pkg/.git/hook.py',
      'tools/pkg/_lib/helper.py',
    ]) {
      const path = join(ws.project, '.ai', junk);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, '{"name": "junk"}\n');
    }
    // Malformed metadata.
    await ws.write('project', 'tools/bad/broken.py', py('bad', 'x', '__version__ = compute()\n'));
    await ws.write('project', 'tools/bad/invalid.yaml', 'description: [unclosed\n');
    // Tools whose top level would leave a marker if anything ran them.
    const marker = join(ws.root, 'ran');
    await ws.write(
      'project',
      'tools/m/side.py',
      py('m', 'side effect', `open(${JSON.stringify(marker)}, "w")\n`),
    );
    await ws.write(
      'project',
      'tools/m/side.js',
      `export const __category__ = "m";\nimport { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\n`,
    );
    executor = await ws.executor();
  });

  afterAll(async () => {
    await rm(ws.root, { recursive: true, force: true });
  });

  describe('query language', () => {
    it('lists everything for an empty query or *, with score 1', async () => {
      for (const query of ['', '*', undefined]) {
        const r = await search({ scope: 'tool.q', ...(query === undefined ? {} : { query }) });
        expect(r.total).toBe(7);
        expect(r.results.every((x) => x.score === 1)).toBe(true);
      }
    });

    it('ANDs juxtaposed terms and matches substrings', async () => {
      expect(ids(await search({ scope: 'tool.q', query: 'file' }))).toEqual([
        'q/file_reader',
        'q/file_writer',
        'q/profile',
      ]);
      expect(ids(await search({ scope: 'tool.q', query: 'file read' }))).toEqual(['q/file_reader']);
    });

    it('supports AND, OR, NOT and parentheses', async () => {
      expect(ids(await search({ scope: 'tool.q', query: 'file AND write' }))).toEqual(['q/file_writer']);
      expect(ids(await search({ scope: 'tool.q', query: 'web OR thread' }))).toEqual([
        'q/thread_list',
        'q/web-fetch',
        'q/web_search',
      ]);
      expect(ids(await search({ scope: 'tool.q', query: 'file NOT write' }))).toEqual([
        'q/file_reader',
        'q/profile',
      ]);
      expect(ids(await search({ scope: 'tool.q', query: '(web OR thread) AND list' }))).toEqual([
        'q/thread_list',
      ]);
      expect(ids(await search({ scope: 'tool.q', query: 'NOT (web OR file OR thread)' }))).toEqual([
        'q/greek',
      ]);
    });

    it('matches phrases exactly', async () => {
      expect(ids(await search({ scope: 'tool.q', query: '"a file from"' }))).toEqual(['q/file_reader']);
      expect((await search({ scope: 'tool.q', query: '"file a"' })).total).toBe(0);
    });

    it('matches wildcards against whole words (prefix, suffix, infix; hyphens split)', async () => {
      expect(ids(await search({ scope: 'tool.q', query: 'writ*' }))).toEqual(['q/file_writer']);
      expect(ids(await search({ scope: 'tool.q', query: '*search' }))).toEqual(['q/web_search']);
      expect(ids(await search({ scope: 'tool.q', query: '*hread*' }))).toEqual(['q/thread_list']);
      expect(ids(await search({ scope: 'tool.q', query: 'fetc*' }))).toEqual(['q/web-fetch']);
      expect((await search({ scope: 'tool.q', query: 'rite*' })).total).toBe(0);
    });

    it('uses fuzzy matching only when enabled, within max_distance', async () => {
      expect((await search({ scope: 'tool.q', query: 'serch' })).total).toBe(0);
      expect(
        (await search({ scope: 'tool.q', query: 'serch', fuzzy: { enabled: false, max_distance: 2 } })).total,
      ).toBe(0);
      expect(
        ids(await search({ scope: 'tool.q', query: 'serch', fuzzy: { enabled: true, max_distance: 1 } })),
      ).toEqual(['q/web_search']);
      expect(
        (await search({ scope: 'tool.q', query: 'srch', fuzzy: { enabled: true, max_distance: 1 } })).total,
      ).toBe(0);
      expect(
        ids(await search({ scope: 'tool.q', query: 'srch', fuzzy: { enabled: true, max_distance: 2 } })),
      ).toContain('q/web_search');
    });

    it('applies proximity to the AST terms', async () => {
      const base = { scope: 'tool.q', query: 'alpha theta' };
      expect((await search(base)).total).toBe(1);
      expect((await search({ ...base, proximity: { enabled: true, max_distance: 3 } })).total).toBe(0);
      expect((await search({ ...base, proximity: { enabled: true, max_distance: 7 } })).total).toBe(1);
      // Default distance 5: gamma … zeta are 3 apart.
      expect(
        (await search({ scope: 'tool.q', query: 'gamma zeta', proximity: { enabled: true } })).total,
      ).toBe(1);
    });

    it('requires every `fields` sub-query to match its own field', async () => {
      expect(ids(await search({ scope: 'tool', fields: { category: 'q', name: 'file*' } }))).toEqual([
        'q/file_reader',
        'q/file_writer',
      ]);
      expect(ids(await search({ scope: 'tool', query: 'web', fields: { description: 'pages' } }))).toEqual([
        'q/web_search',
      ]);
    });
  });

  describe('scores', () => {
    // Ranking (rank.ts): whole name 1, id segment 0.9, id word 0.8, word prefix 0.7, inside the id
    // 0.6; a weighted field (tool_extractor.yaml: name 3, description 2, category 1.5,
    // tool_type 1) 0.5 × weight / 3 as a word, 0.4 × … inside a word; the mean over the terms.
    it('scores where each term is found best', async () => {
      const score = async (scope: string, query: string, extra: Partial<Omit<SearchRequest, 'scope'>> = {}) =>
        (await search({ scope, query, ...extra })).results[0]!.score;
      expect(await score('tool.q', 'file_reader')).toBe(1); // the whole name
      expect(await score('tool.q', 'q/file_reader')).toBe(1); // the whole id
      expect(await score('tool.q.file_reader', 'q')).toBe(0.9); // an id segment
      expect(await score('tool.q', 'reader')).toBe(0.8); // a word of the name
      expect(await score('tool.q.file_reader', 'rea')).toBe(0.7); // the start of a word
      expect(await score('tool.q.profile', 'ofil')).toBe(0.6); // inside the name
      expect(await score('tool.q', 'contents')).toBe(0.3333); // a description word: 0.5 × 2/3
      expect(await score('tool.q', 'onten')).toBe(0.2667); // inside a description word: 0.4 × 2/3
      expect(await score('tool.q.file_reader', 'python')).toBe(0.1667); // tool_type: 0.5 × 1/3
      // The mean over the terms: 'file' is a name word (0.8), 'disk' a description word (0.3333).
      expect(await score('tool.q', 'file disk')).toBe(0.5667);
      // `fields` sub-queries count as terms too: 'read' (0.7) and category 'q' (an id segment, 0.9).
      expect(await score('tool.q', 'read', { fields: { category: 'q' } })).toBe(0.8);
      // A query without a positive term is a filter: its matches score 1.
      expect(await score('tool.q.greek', 'NOT nothing')).toBe(1);
    });

    it('uses the directive weights with a reader', async () => {
      await ws.write('project', 'directives/ops/deploy.md', 'deploy body');
      await ws.write('project', 'directives/ops/ship.md', 'ship body');
      const reader: SearchReader = (_text, _path, id) =>
        id.endsWith('deploy')
          ? { name: 'deploy', description: 'Deploy the app', category: 'ops' }
          : { name: 'ship', description: 'Ship and deploy the app', category: 'ops' };
      const found = await search({ scope: 'directive', query: 'deploy' }, { directive: reader });
      expect(found.results.map((r) => [r.id, r.ref, r.type, r.score])).toEqual([
        ['ops/deploy', 'directive:ops/deploy', 'directive', 1],
        // directive_extractor.yaml: name 3, description 2, category 1.5 → 0.5 × 2/3
        ['ops/ship', 'directive:ops/ship', 'directive', 0.3333],
      ]);
    });

    it('sorts by score, then source, then id', async () => {
      const r = await search({ scope: 'tool.q', query: 'file' });
      expect(r.results.map((x) => [x.id, x.score])).toEqual([
        ['q/file_reader', 0.8],
        ['q/file_writer', 0.8],
        ['q/profile', 0.6],
      ]);
      const s = await search({ scope: 'tool.s', query: 'copy' });
      expect(s.results.map((x) => x.source)).toEqual(['project', 'user', 'system']);
      // OR: the mean over both terms; 'web' is a whole word of web-fetch and web_search (0.8 / 2),
      // 'read' starts a word of file_reader (0.7 / 2) and is inside thread_list (0.6 / 2).
      const t = await search({ scope: 'tool.q', query: 'read OR web' });
      expect(t.results.map((x) => [x.id, x.score])).toEqual([
        ['q/web-fetch', 0.4],
        ['q/web_search', 0.4],
        ['q/file_reader', 0.35],
        ['q/thread_list', 0.3],
      ]);
    });
  });

  describe('scope', () => {
    it('accepts shorthand, dotted namespaces and the capability form', async () => {
      const all = await search({ scope: 'tool', limit: 1000, include_internal: true });
      expect(all.results.some((r) => r.id === 'rye/core/runtimes/python/script')).toBe(true);
      const forms = ['tool.q', 'tool.q.*', 'rye.search.tool.q.*', 'rye.search.tool.q'];
      for (const scope of forms) expect((await search({ scope })).total).toBe(7);
      expect((await search({ scope: 'tool.q.file_reader' })).total).toBe(1);
    });

    it('matches namespaces by whole segments', async () => {
      const core = await search({ scope: 'tool.rye.core.*', limit: 1000, include_internal: true });
      const found = ids(core);
      expect(found).toContain('rye/core/mine');
      expect(found).toContain('rye/core/runtimes/node/node');
      expect(found).not.toContain('rye/core-x/thing');
      expect(found.every((id) => id.startsWith('rye/core/'))).toBe(true);
    });

    it('rejects scopes without a known kind', async () => {
      for (const scope of ['', 'widget', 'rye.search.*']) {
        const error = await search({ scope }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RyeError);
        expect((error as RyeError).code).toBe('VALIDATION');
        expect((error as RyeError).message).toBe(SCOPE_ERROR);
        expect((error as RyeError).hint).toBeTruthy();
      }
    });
  });

  describe('filters', () => {
    const f = (filters: Record<string, unknown>) => search({ scope: 'tool.f', filters }).then(ids);

    it('filters on item and metadata fields', async () => {
      expect(await f({ author: 'ALICE' })).toEqual(['f/one']);
      expect(await f({ author: '!alice' })).toEqual(['f/Three', 'f/two']);
      expect(await f({ tags: 'web' })).toEqual(['f/Three', 'f/one']);
      expect(await f({ tags: ['cli', 'net'] })).toEqual(['f/one', 'f/two']);
      expect(await f({ tags: '!web' })).toEqual(['f/two']);
      expect(await f({ author: ['bob', 'carol'] })).toEqual(['f/Three', 'f/two']);
      expect(await f({ version: '>=2.0.0' })).toEqual(['f/two']);
      expect(await f({ version: '<2' })).toEqual(['f/Three', 'f/one']);
      expect(await f({ version: '>1.0.0' })).toEqual(['f/two']);
      expect(await f({ version: '<=1.0.0' })).toEqual(['f/Three', 'f/one']);
      expect(await f({ source: 'project', tool_type: 'python' })).toHaveLength(3);
      expect(await f({ nothing: 'x' })).toEqual([]);
      expect(await f({ signed: true, type: 'tool' })).toHaveLength(3);
      expect(await f({ signed: false })).toEqual([]);
      expect(await f({ date_from: '2024-03-01' })).toEqual(['f/Three', 'f/two']); // undated passes
      expect(await f({ date_to: '2024-03-01' })).toEqual(['f/Three', 'f/one']);
    });
  });

  describe('sorting and pagination', () => {
    it('sorts by name (case-insensitive) and by date (undated last)', async () => {
      expect((await search({ scope: 'tool.f', sort_by: 'name' })).results.map((r) => r.name)).toEqual([
        'one',
        'Three',
        'two',
      ]);
      expect((await search({ scope: 'tool.f', sort_by: 'date' })).results.map((r) => r.id)).toEqual([
        'f/two',
        'f/one',
        'f/Three',
      ]);
    });

    it('returns the [offset, offset+limit) slice and the total', async () => {
      const page = await search({ scope: 'tool.q', sort_by: 'name', limit: 2, offset: 1 });
      expect(page.total).toBe(7);
      expect(page.results.map((r) => r.name)).toEqual(['file_writer', 'greek']);
      expect(page).toMatchObject({
        limit: 2,
        offset: 1,
        scope: 'tool.q',
        space: 'all',
        search_type: 'keyword',
      });
      const past = await search({ scope: 'tool.q', limit: 5, offset: 100 });
      expect(past).toMatchObject({ total: 7, results: [] });
      const defaults = await searchItems(executor, { scope: 'tool' });
      expect(defaults).toMatchObject({ status: 'success', limit: 10, offset: 0, query: '', space: 'all' });
      expect(defaults.results).toHaveLength(10);
    });

    it('pages a broad query as a full sort would (every sort, items in three spaces)', async () => {
      const spaces = ['project', 'user', 'system'] as const;
      for (let i = 0; i < 45; i++) {
        const name = `item_${String((i * 37) % 45).padStart(2, '0')}`;
        await ws.write(
          spaces[i % 3]!,
          `tools/many/${name}.py`,
          py('many', `thing ${i % 4 ? 'alpha' : 'beta'}`),
        );
      }
      for (const sort_by of ['score', 'name', 'date'] as const) {
        const all = await search({ scope: 'tool.many', query: 'thing OR beta', sort_by, limit: 100 });
        expect(all.total).toBe(45);
        for (const [offset, limit] of [
          [0, 3],
          [2, 5],
          [7, 1],
        ] as const) {
          const page = await search({ scope: 'tool.many', query: 'thing OR beta', sort_by, limit, offset });
          expect(page.results, `${sort_by} ${offset}+${limit}`).toEqual(
            all.results.slice(offset, offset + limit),
          );
        }
      }
    });

    it('validates sort_by, space, limit and offset', async () => {
      const cases: [Partial<SearchRequest>, RegExp][] = [
        [{ sort_by: 'size' as never }, /sort_by/],
        [{ space: 'moon' as never }, /space/],
        [{ limit: -1 }, /limit/],
        [{ offset: 1.5 }, /offset/],
      ];
      for (const [extra, message] of cases) {
        const error = await search({ scope: 'tool', ...extra }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RyeError);
        expect((error as RyeError).code).toBe('VALIDATION');
        expect((error as RyeError).message).toMatch(message);
      }
    });
  });

  describe('spaces and shadows', () => {
    it('annotates shadows in precedence order and never drops an item', async () => {
      const r = await search({ scope: 'tool.s' });
      const by = (id: string, source: string) => r.results.find((x) => x.id === id && x.source === source)!;
      expect(r.total).toBe(6);
      expect(by('s/dup', 'project').shadows).toEqual([{ space: 'user' }, { space: 'system' }]);
      expect(by('s/dup', 'user').shadowed_by).toBe('project');
      expect(by('s/dup', 'system').shadowed_by).toBe('project');
      expect(by('s/two', 'user').shadows).toEqual([{ space: 'system' }]);
      expect(by('s/two', 'system').shadowed_by).toBe('user');
      expect(by('s/sys', 'system').shadows).toBeUndefined();
      expect(by('s/sys', 'system').shadowed_by).toBeUndefined();
      expect(by('s/dup', 'project').shadowed_by).toBeUndefined();
    });

    it('tells copies of one id apart by path and version', async () => {
      await ws.write('user', 'tools/pv/copy.yaml', yamlTool('pv', 'user copy').replace('1.0.0', '1.2.0'));
      await ws.write(
        'project',
        'tools/pv/copy.yaml',
        yamlTool('pv', 'project copy').replace('1.0.0', '2.0.0'),
      );
      await ws.write(
        'project',
        'tools/pv/bare.yaml',
        yamlTool('pv', 'no version').replace('version: "1.0.0"\n', ''),
      );
      const r = await search({ scope: 'tool.pv' });
      expect(r.results.map((x) => [x.id, x.source, x.path, x.version])).toEqual([
        ['pv/bare', 'project', join(ws.project, '.ai', 'tools', 'pv', 'bare.yaml'), undefined],
        ['pv/copy', 'project', join(ws.project, '.ai', 'tools', 'pv', 'copy.yaml'), '2.0.0'],
        ['pv/copy', 'user', join(ws.user, '.ai', 'tools', 'pv', 'copy.yaml'), '1.2.0'],
      ]);
      // A directive's version comes from its reader.
      await ws.write('project', 'directives/pv/dir.md', 'pv directive');
      const reader: SearchReader = () => ({ name: 'dir', version: '3.1.0' });
      const [directive] = (await search({ scope: 'directive.pv' }, { directive: reader })).results;
      expect([directive?.path, directive?.version]).toEqual([
        join(ws.project, '.ai', 'directives', 'pv', 'dir.md'),
        '3.1.0',
      ]);
    });

    it('selects spaces', async () => {
      const sources = async (space: SearchRequest['space']) =>
        (await search({ scope: 'tool.s', space })).results.map((x) => `${x.id}@${x.source}`).sort();
      expect(await sources('project')).toEqual(['s/dup@project']);
      expect(await sources('user')).toEqual(['s/dup@user', 's/two@user']);
      expect(await sources('system')).toEqual(['s/dup@system', 's/sys@system', 's/two@system']);
      expect(await sources('local')).toHaveLength(6);
      expect(await sources('all')).toEqual(await sources('local'));
      expect(await sources('registry')).toEqual([]);
      const user = await search({ scope: 'tool.s', space: 'user' });
      expect(user.results.find((x) => x.id === 's/two')!.shadows).toBeUndefined();
      expect(user.space).toBe('user');
    });
  });

  describe('enumeration and metadata', () => {
    it('indexes only files with the kind extensions, skipping private, hidden and excluded ones', async () => {
      expect(ids(await search({ scope: 'tool.pkg' }))).toEqual(['pkg/real']);
    });

    it('applies collect.yaml excludes and follows only links that stay inside the type directory', async () => {
      await ws.write('project', 'tools/ex/kept.py', py('ex', 'kept'));
      await ws.write('project', 'tools/ex/build/out.py', py('ex/build', 'build output'));
      await ws.write('project', 'tools/ex/skip_me.py', py('ex', 'listed file'));
      expect(ids(await search({ scope: 'tool.ex' }))).toEqual(['ex/build/out', 'ex/kept', 'ex/skip_me']);
      await ws.write(
        'project',
        'tools/rye/core/bundler/collect.yaml',
        'exclude_dirs: [build]\nexclude_files: [skip_me.py]\n',
      );
      expect(ids(await search({ scope: 'tool.ex' }))).toEqual(['ex/kept']);
      await rm(join(ws.project, '.ai', 'tools', 'rye', 'core', 'bundler'), { recursive: true });
      expect((await search({ scope: 'tool.ex' })).total).toBe(3);

      const outside = join(ws.root, 'outside.py');
      await writeFile(outside, py('ln', 'outside the space'));
      await symlink(outside, join(ws.project, '.ai', 'tools', 'ex', 'escape.py'));
      await symlink(
        join(ws.project, '.ai', 'tools', 'ex', 'kept.py'),
        join(ws.project, '.ai', 'tools', 'ex', 'alias.py'),
      );
      const found = ids(await search({ scope: 'tool.ex' }));
      expect(found).toContain('ex/alias');
      expect(found).not.toContain('ex/escape');
    });

    it('lists items with malformed metadata with an error instead of failing', async () => {
      const r = await search({ scope: 'tool.bad' });
      expect(ids(r)).toEqual(['bad/broken', 'bad/invalid']);
      for (const item of r.results) expect(item.error).toMatch(/Malformed metadata/);
      const [broken] = (await search({ scope: 'tool.bad', query: 'broken' })).results;
      // Only the name is known; nothing says how to run it, yet it is listed, with its error.
      expect(broken).toMatchObject({ id: 'bad/broken', name: 'broken', score: 1 });
      expect(broken!.internal).toBeUndefined();
      expect(broken!.error).toContain('__version__');
    });

    it('returns the compact result shape', async () => {
      const [item] = (await search({ scope: 'tool.f.one' })).results;
      expect(item).toEqual({
        id: 'f/one',
        ref: 'tool:f/one',
        type: 'tool',
        name: 'one',
        description: 'First',
        category: 'f',
        source: 'project',
        path: join(ws.project, '.ai', 'tools', 'f', 'one.yaml'),
        version: '1.0.0',
        score: 1,
        signed: true,
      });
      // Metadata the result no longer repeats still filters.
      expect(ids(await search({ scope: 'tool.f', filters: { author: 'alice', tags: 'net' } }))).toEqual([
        'f/one',
      ]);
    });

    it('reports unsigned, modified and untrusted items as unsigned without failing', async () => {
      await ws.write('project', 'tools/sig/plain.py', py('sig', 'never signed'), null);
      const modified = await ws.write('project', 'tools/sig/edited.py', py('sig', 'edited later'));
      await appendFile(modified, '# tampered\n');
      const stranger = generateKeyPair();
      await ws.write('project', 'tools/sig/foreign.py', py('sig', 'foreign key'), stranger);
      await ws.write('project', 'tools/sig/moved.py', py('elsewhere', 'moved file'));
      const r = await search({ scope: 'tool.sig' });
      expect(r.results.map((x) => [x.id, x.signed])).toEqual([
        ['sig/edited', false],
        ['sig/foreign', false],
        ['sig/moved', false],
        ['sig/plain', false],
      ]);
      // Trusting the key later is picked up by the next search.
      await trust(ws.user, stranger, 'stranger');
      const after = await search({ scope: 'tool.sig', query: 'foreign' });
      expect(after.results[0]).toMatchObject({ id: 'sig/foreign', signed: true });
    });

    it('re-reads changed files, sees new ones and drops deleted ones', async () => {
      const path = await ws.write('project', 'tools/c/changing.py', py('c', 'alpha one'));
      expect((await search({ scope: 'tool.c', query: 'alpha' })).total).toBe(1);
      // Same size, written right away: the stat stamp may not change, the content does.
      await ws.write('project', 'tools/c/changing.py', py('c', 'omega one'));
      expect((await search({ scope: 'tool.c', query: 'alpha' })).total).toBe(0);
      expect((await search({ scope: 'tool.c', query: 'omega' })).results[0]).toMatchObject({
        id: 'c/changing',
        signed: true,
      });
      await ws.write('project', 'tools/c/nested/added.py', py('c/nested', 'omega two'));
      expect(ids(await search({ scope: 'tool.c', query: 'omega' }))).toEqual([
        'c/changing',
        'c/nested/added',
      ]);
      await rm(path);
      expect(ids(await search({ scope: 'tool.c', query: 'omega' }))).toEqual(['c/nested/added']);
      await rm(join(ws.project, '.ai', 'tools', 'c'), { recursive: true });
      expect((await search({ scope: 'tool.c' })).total).toBe(0);
    });

    it('uses the readers passed in, and falls back to the file stem without one', async () => {
      await ws.write('project', 'knowledge/k/entry.md', '# Entry\nSome knowledge about gardens.\n');
      await ws.write('project', 'knowledge/k/boom.md', 'broken\n');
      const reader: SearchReader = (_text, _path, id) => {
        if (id.endsWith('boom')) throw new Error('Malformed metadata in boom.md:1: name: missing');
        return {
          name: 'entry',
          title: 'Garden notes',
          tags: ['plants'],
          version: '0.3.0',
          metadata: { entry_type: 'note' },
        };
      };
      const withReader = await search({ scope: 'knowledge.k' }, { knowledge: reader });
      const entry = withReader.results.find((r) => r.id === 'k/entry')!;
      expect(entry).toMatchObject({ name: 'entry', title: 'Garden notes', signed: true });
      expect(entry).not.toHaveProperty('metadata');
      expect(withReader.results.find((r) => r.id === 'k/boom')!.error).toMatch(/Malformed/);
      const filtered = await search(
        { scope: 'knowledge.k', filters: { entry_type: 'note' } },
        { knowledge: reader },
      );
      expect(ids(filtered)).toEqual(['k/entry']);
      expect(
        ids(
          await search(
            { scope: 'knowledge.k', filters: { tags: 'plants', version: '0.3.0' } },
            { knowledge: reader },
          ),
        ),
      ).toEqual(['k/entry']);
      // Without a reader only the text says what it is about: a match there still counts, a little.
      const fallback = await search({ scope: 'knowledge.k', query: 'gardens' });
      expect(fallback.results).toHaveLength(1);
      expect(fallback.results[0]).toMatchObject({ id: 'k/entry', name: 'entry', score: 0.1 });
      expect(fallback.results[0]!.title).toBeUndefined(); // the same as the name
    });

    it('sorts by dates found in reader metadata as well', async () => {
      await ws.write('project', 'knowledge/d/old.md', 'old');
      await ws.write('project', 'knowledge/d/new.md', 'new');
      await ws.write('project', 'knowledge/d/none.md', 'none');
      const dates: Record<string, SearchableFields> = {
        old: { created_at: '2023-05-01T00:00:00Z' },
        new: { metadata: { updated_at: '2025-01-01' } },
        none: {},
      };
      const reader: SearchReader = (text) => dates[text.trim().split('\n').pop()!] ?? {};
      const r = await search({ scope: 'knowledge.d', sort_by: 'date' }, { knowledge: reader });
      expect(r.results.map((x) => x.id)).toEqual(['d/new', 'd/old', 'd/none']);
      const recent = await search(
        { scope: 'knowledge.d', filters: { date_from: '2024-01-01' } },
        { knowledge: reader },
      );
      expect(ids(recent)).toEqual(['d/new', 'd/none']); // new has no created_at: undated passes
    });

    it('never runs a tool', async () => {
      await search({ scope: 'tool.m', query: 'side' });
      await search({ scope: 'tool' });
      expect(existsSync(join(ws.root, 'ran'))).toBe(false);
      // side.js declares no executor: hidden unless internal tools are asked for.
      expect(await search({ scope: 'tool.m' })).toMatchObject({ total: 1, hidden: 1 });
      expect((await search({ scope: 'tool.m', include_internal: true })).total).toBe(2);
    });
  });
});
