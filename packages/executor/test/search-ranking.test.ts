/**
 * Search ranks what a user means (issue 11): exact names and id segments before descriptions,
 * tools that cannot be executed on their own hidden unless asked for, no zero-score results,
 * compact results that say how to call each tool.
 */
import { rm } from 'node:fs/promises';
import { RyeError } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../src/executor.js';
import { parameterSummary } from '../src/parameter-summary.js';
import type { SearchReader, SearchRequest } from '../src/search/index.js';
import { searchItems } from '../src/search/index.js';
import { toolParameterSchema } from '../src/tool-parameters.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace } from './helpers/workspace.js';

function py(category: string, description: string, extra = ''): string {
  return `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "${category}"
__tool_description__ = "${description}"
${extra}`;
}

const ids = (response: { results: { id: string }[] }) => response.results.map((r) => r.id);

describe('search ranking and results', () => {
  let ws: Workspace;
  let executor: Executor;
  const search = (
    request: Partial<SearchRequest> & { scope: string },
    readers?: Record<string, SearchReader>,
  ) =>
    searchItems(
      readers
        ? {
            ...executor,
            kinds: executor.kinds,
            readers: Object.fromEntries(Object.entries(readers).map(([k, search]) => [k, { search }])),
          }
        : executor,
      { limit: 100, ...request },
    );

  beforeAll(async () => {
    ws = await createWorkspace();
    // Ranking.
    await ws.write('project', 'tools/r/deploy.py', py('r', 'Ship the app'));
    await ws.write('project', 'tools/r/shipper.py', py('r', 'Deploy the app to production'));
    await ws.write('project', 'tools/r/deploy/rollout.py', py('r/deploy', 'Roll out slowly'));
    await ws.write('project', 'tools/r/deployment_log.py', py('r', 'Show past runs'));
    // Internal items.
    await ws.write('project', 'tools/i/lib/helper.py', py('i/lib', 'helper module for gizmo tools'));
    await ws.write(
      'project',
      'tools/i/engine.yaml',
      'version: "1.0.0"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ncategory: i\ndescription: "gizmo runtime"\n',
    );
    await ws.write(
      'project',
      'tools/i/orphan.py',
      '__version__ = "1.0.0"\n__category__ = "i"\n__tool_description__ = "gizmo without executor"\n',
    );
    await ws.write('project', 'tools/i/gizmo.py', py('i', 'the gizmo tool itself'));
    await ws.write('project', 'tools/i/broken.py', py('i', 'gizmo', '__executor_id__ = compute()\n'));
    // Zero scores.
    await ws.write('project', 'tools/z/quiet.py', `# zebra crossing\n${py('z', 'Says nothing of it')}`);
    await ws.write('project', 'knowledge/z/note.md', '# Note\nA zebra walked by.\n');
    // Parameters.
    await ws.write(
      'project',
      'tools/p/schema.py',
      py(
        'p',
        'Has a schema',
        `CONFIG_SCHEMA = {"type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"], "default": "a", "description": "How"}, "target": {"type": "string", "description": "${'Where it goes. '.repeat(20)}"}, "__proto__": {"type": "integer"}}, "required": ["target"]}\n`,
      ),
    );
    await ws.write(
      'project',
      'tools/p/listed.yaml',
      'version: "1.0.0"\ntool_type: http\nexecutor_id: rye/core/runtimes/http/http\ncategory: p\ndescription: "Has a parameters list"\nparameters:\n  - name: url\n    type: string\n    required: true\n    description: "Page to fetch"\n  - name: timeout\n    type: integer\n    default: 30\n',
    );
    await ws.write(
      'project',
      'tools/p/either.py',
      py(
        'p',
        'Needs one of two',
        'CONFIG_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "file_path": {"type": "string"}}, "anyOf": [{"required": ["path"]}, {"required": ["file_path"]}]}\n',
      ),
    );
    await ws.write(
      'project',
      'tools/p/none.py',
      py('p', 'Takes nothing', 'CONFIG_SCHEMA = {"type": "object"}\n'),
    );
    await ws.write('project', 'tools/p/silent.py', py('p', 'Declares nothing'));
    executor = await ws.executor();
  });

  afterAll(async () => {
    await rm(ws.root, { recursive: true, force: true });
  });

  it('ranks an exact name over an id segment, a name word and a description', async () => {
    const found = await search({ scope: 'tool.r', query: 'deploy' });
    expect(found.results.map((r) => [r.id, r.score])).toEqual([
      ['r/deploy', 1], // the name
      ['r/deploy/rollout', 0.9], // an id segment
      ['r/deployment_log', 0.7], // the start of a name word
      ['r/shipper', 0.3333], // its description only
    ]);
  });

  it('favours items that match more of the words, and match them better', async () => {
    // OR: 'app' and 'production' are both in r/shipper's description, only 'app' in r/deploy's.
    const or = await search({ scope: 'tool.r', query: 'app OR production' });
    expect(or.results.map((r) => [r.id, r.score])).toEqual([
      ['r/shipper', 0.3333],
      ['r/deploy', 0.1667],
    ]);
    // AND: both match both words; r/deploy is named deploy, r/shipper only says it.
    const and = await search({ scope: 'tool.r', query: 'deploy app' });
    expect(and.results.map((r) => [r.id, r.score])).toEqual([
      ['r/deploy', 0.6667],
      ['r/shipper', 0.3333],
    ]);
  });

  it('hides tools that cannot run on their own, counts them, and shows them when asked', async () => {
    const found = await search({ scope: 'tool.i', query: 'gizmo' });
    expect(ids(found)).toEqual(['i/gizmo']);
    expect(found.hidden).toBe(3);
    expect(found.hint).toMatch(/include_internal: true/);
    // Malformed metadata says nothing about running it: listed with its error, never hidden.
    const listed = await search({ scope: 'tool.i' });
    expect(ids(listed).sort()).toEqual(['i/broken', 'i/gizmo']);
    expect(listed.results.find((r) => r.id === 'i/broken')!.error).toMatch(/Malformed metadata/);

    const all = await search({ scope: 'tool.i', include_internal: true });
    expect(Object.fromEntries(all.results.map((r) => [r.id, r.internal ?? null]))).toEqual({
      'i/gizmo': null,
      'i/broken': null,
      'i/engine': 'runtime',
      'i/lib/helper': 'library',
      'i/orphan': 'no executor',
    });
    expect(all.hidden).toBeUndefined();

    // A tool_type filter that selects a type shows that type; a negation selects none.
    expect(ids(await search({ scope: 'tool.i', filters: { tool_type: 'runtime' } }))).toEqual(['i/engine']);
    expect(ids(await search({ scope: 'tool.i', fields: { tool_type: 'runtime' } }))).toEqual(['i/engine']);
    expect(ids(await search({ scope: 'tool.i', filters: { tool_type: '!python' } }))).toEqual([]);

    const error = await search({ scope: 'tool.i', include_internal: 'yes' as never }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RyeError);
    expect((error as RyeError).message).toMatch(/include_internal must be a boolean/);
  });

  it('drops results that score 0: a match in tool source only', async () => {
    const tools = await search({ scope: 'tool.z', query: 'zebra' });
    expect(tools).toMatchObject({ total: 0, results: [] });
    expect(tools.hidden).toBeUndefined();
    // The words of knowledge text still count, a little.
    const knowledge = await search({ scope: 'knowledge.z', query: 'zebra' });
    expect(knowledge.results.map((r) => [r.id, r.score])).toEqual([['z/note', 0.1]]);
    // Listing everything is not a query: every item is listed, with score 1.
    expect((await search({ scope: 'tool.z' })).results.map((r) => r.score)).toEqual([1]);
  });

  it('returns compact results that say how to call each tool', async () => {
    const found = await search({ scope: 'tool.p', sort_by: 'name' });
    const by = Object.fromEntries(found.results.map((r) => [r.id, r]));
    expect(Object.keys(by['p/schema']!).sort()).toEqual(
      [
        'id',
        'ref',
        'type',
        'name',
        'description',
        'category',
        'source',
        'path',
        'version',
        'score',
        'signed',
        'parameters',
      ].sort(),
    );
    const schema = by['p/schema']!.parameters!;
    // Required first, enum and default shown, long descriptions cut short.
    expect(Object.keys(schema)).toEqual(['target', 'mode', '__proto__']);
    expect(schema.mode).toBe('string, one of "a", "b", default "a" — How');
    expect(schema.target).toMatch(/^string, required — Where it goes\. .*…$/);
    expect(schema.target!.length).toBeLessThan(150);
    expect(Object.getOwnPropertyDescriptor(schema, '__proto__')?.value).toBe('integer');
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);

    expect(by['p/listed']!.parameters).toEqual({
      url: 'string, required — Page to fetch',
      timeout: 'integer, default 30',
    });
    expect(by['p/either']!.parameters).toEqual({
      path: 'string, required unless file_path is given',
      file_path: 'string, required unless path is given',
    });
    expect(by['p/none']!.parameters).toEqual({});
    expect(by['p/silent']!.parameters).toBeUndefined();
    for (const result of found.results) {
      for (const gone of ['preview', 'metadata', 'integrity']) expect(result).not.toHaveProperty(gone);
    }
  });

  it('shows a directive its inputs and a knowledge entry its title', async () => {
    await ws.write('project', 'directives/d/greet.md', 'greet');
    await ws.write('project', 'knowledge/d/guide.md', 'guide');
    const directive: SearchReader = () => ({
      name: 'greet',
      description: 'Say hello',
      metadata: { inputs: ['name', 'tone'] },
    });
    const knowledge: SearchReader = () => ({ name: 'guide', title: 'A guide to greeting' });
    const [greet] = (await search({ scope: 'directive.d' }, { directive })).results;
    expect(greet).toMatchObject({ ref: 'directive:d/greet', inputs: ['name', 'tone'] });
    expect(greet).not.toHaveProperty('title');
    const [guide] = (await search({ scope: 'knowledge.d' }, { knowledge })).results;
    expect(guide).toMatchObject({ ref: 'knowledge:d/guide', name: 'guide', title: 'A guide to greeting' });
  });
});

describe('parameterSummary', () => {
  const summary = (configSchema: unknown, parameters: unknown) => {
    const schema = toolParameterSchema({
      ...(configSchema ? { configSchema: configSchema as Record<string, unknown> } : {}),
      fields: parameters === undefined ? {} : { parameters },
    });
    return schema ? parameterSummary(schema) : undefined;
  };

  it('reads a JSON schema, a parameters list or mapping, and nothing', () => {
    expect(summary({ type: 'object', properties: { a: { type: ['string', 'null'] } } }, undefined)).toEqual({
      a: 'string|null',
    });
    expect(summary(undefined, { q: { type: 'string', description: 'Query' } })).toEqual({
      q: 'string — Query',
    });
    expect(summary(undefined, [{ name: 'n', required: true }, 'junk', { type: 'x' }])).toEqual({
      n: 'any, required',
    });
    expect(summary(undefined, undefined)).toBeUndefined();
    const many = { type: 'string', enum: Array.from({ length: 12 }, (_, i) => i) };
    expect(summary({ properties: { e: many } }, undefined)!.e).toBe(
      'string, one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …',
    );
  });
});
