/**
 * A fork's setup reads the tools its capabilities reach, not every tool of the project: a
 * capability naming a tool id resolves that id, a pattern searches its own folder of ids, and a
 * tool no capability reaches is never opened (counted through node:fs, which every reader of the
 * executor goes through). The palette stays what it was: same tools, same order, same warnings.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { buildPalette, standardPrimaries } from '@ryeos/threads';
import { afterEach, describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const TOOL = (category: string, description: string) => `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/node';
export const __category__ = '${category}';
export const __tool_description__ = ${JSON.stringify(description)};
console.log(JSON.stringify({ success: true }));
`;

const PERMISSIONS = `    <model tier="fast" provider="anthropic"/>
    <permissions>
      <execute>
        <tool>rye.file-system.read</tool>
        <tool>acme.echo</tool>
        <tool>team.*</tool>
        <tool>nobody.*</tool>
      </execute>
    </permissions>`;

/** Tools no capability above reaches: unsigned, and not even valid JavaScript. */
const UNREACHED = ['.ai/tools/zzz/broken.js', '.ai/tools/zzz/deep/broken.js', '.ai/tools/acme/other.js'];

const fixture = useThreadFixture(async (fx) => {
  await fx.write(
    '.ai/directives/acme/reach.md',
    directive('reach', { metadata: PERMISSIONS, outputs: '<output name="answer">Anything</output>' }),
  );
  await fx.sign('directive:acme/reach');
  for (const [id, description] of [
    ['acme/echo', 'Echo by id'],
    ['team/alpha', 'Team alpha'],
    ['team/deep/beta', 'Team beta'],
  ] as const) {
    await fx.write(`.ai/tools/${id}.js`, TOOL(id.slice(0, id.lastIndexOf('/')), description));
    await fx.sign(`tool:${id}`);
  }
  for (const path of UNREACHED) await fx.write(path, 'export const = ;; not a tool {\n');
});

/** Every path opened for reading under the project's `.ai/tools/` while `fn` runs. */
async function opened(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const note = (path: unknown) => {
    const text = String(path);
    if (text.includes('/.ai/tools/')) seen.push(text);
  };
  const originals = {
    readFileSync: fs.readFileSync,
    openSync: fs.openSync,
    readFile: fs.readFile,
    open: fs.open,
    promisesReadFile: fsp.readFile,
    promisesOpen: fsp.open,
  };
  const wrap =
    <F extends (...args: never[]) => unknown>(f: F) =>
    (...args: Parameters<F>) => {
      note(args[0]);
      return f(...args);
    };
  fs.readFileSync = wrap(originals.readFileSync) as typeof fs.readFileSync;
  fs.openSync = wrap(originals.openSync) as typeof fs.openSync;
  fs.readFile = wrap(originals.readFile) as typeof fs.readFile;
  fs.open = wrap(originals.open) as typeof fs.open;
  fsp.readFile = wrap(originals.promisesReadFile) as typeof fsp.readFile;
  fsp.open = wrap(originals.promisesOpen) as typeof fsp.open;
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    Object.assign(fs, {
      readFileSync: originals.readFileSync,
      openSync: originals.openSync,
      readFile: originals.readFile,
      open: originals.open,
    });
    Object.assign(fsp, { readFile: originals.promisesReadFile, open: originals.promisesOpen });
    syncBuiltinESMExports();
  }
  return seen;
}

afterEach(() => syncBuiltinESMExports());

describe('a fork reads only the tools its capabilities reach', () => {
  it('builds the same palette by id and by pattern, and never opens an unreached tool', async () => {
    const server = await fixture().serve({
      turns: [{ tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] }],
    });
    let result: Record<string, unknown> = {};
    const paths = await opened(async () => {
      result = await fixture().rye.execute({ item_id: 'directive:acme/reach', thread: 'fork' });
    });
    expect(result.status, JSON.stringify(result)).toBe('success');

    const tools = (server.requests[0]!.body as { tools: { name: string; description: string }[] }).tools;
    expect(tools.map((t) => t.name)).toEqual([
      'rye_execute',
      'rye_file_system_read',
      'acme_echo',
      'team_alpha',
      'team_deep_beta',
      'rye_directive_return',
      'rye_read_artifact',
    ]);
    expect(tools.find((t) => t.name === 'team_deep_beta')?.description).toBe('Team beta');
    expect(JSON.stringify(result)).not.toMatch(/zzz|acme\/other/);

    const unreached = paths.filter((path) => UNREACHED.some((rel) => path.endsWith(rel)));
    expect(unreached).toEqual([]);
    expect(paths.some((path) => path.endsWith('/.ai/tools/team/deep/beta.js'))).toBe(true);
  });

  it('keeps the palette of ids, patterns and `*` with its warnings, unreached tools left unread', async () => {
    const executor = await fixture().rye.executor();
    const build = (capabilities: string[]) =>
      buildPalette(executor, { capabilities, primaries: standardPrimaries() });
    let narrow: Awaited<ReturnType<typeof build>> | undefined;
    const paths = await opened(async () => {
      narrow = await build([
        'rye.execute.tool.team.*',
        'rye.execute.tool.acme.echo',
        'rye.execute.tool.nobody.*',
        'rye.execute.tool.team.deep.beta',
      ]);
    });
    expect(narrow!.entries.map((e) => [e.name, e.itemId])).toEqual([
      ['rye_execute', 'rye/execute'],
      ['acme_echo', 'acme/echo'],
      ['team_deep_beta', 'team/deep/beta'],
      ['team_alpha', 'team/alpha'],
    ]);
    expect(narrow!.warnings).toEqual(["No tool matches the capability pattern 'nobody/*'"]);
    expect(paths.filter((path) => UNREACHED.some((rel) => path.endsWith(rel)))).toEqual([]);

    // `*` reaches every tool: the broken ones are then read, and left out as before.
    const all = await build(['rye.execute.tool.*']);
    const ids = all.entries.map((e) => e.itemId);
    expect(ids).toEqual(expect.arrayContaining(['acme/echo', 'team/alpha', 'team/deep/beta']));
    expect(ids.some((id) => id.startsWith('zzz/') || id === 'acme/other')).toBe(false);
  });

  it('names a capability that is no tool id in a warning, as a search would, and builds the rest', async () => {
    const executor = await fixture().rye.executor();
    const palette = await buildPalette(executor, {
      capabilities: ['rye.execute.tool.acme..echo', 'rye.execute.tool.acme.echo'],
      primaries: standardPrimaries(),
    });
    expect(palette.entries.map((e) => e.itemId)).toEqual(['rye/execute', 'acme/echo']);
    expect(palette.warnings).toEqual(["No tool matches the capability pattern 'acme//echo'"]);
  });
});
