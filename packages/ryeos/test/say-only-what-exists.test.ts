/**
 * Issue 11 item 8, say only what exists: help, MCP tool descriptions and schema descriptions do
 * not advertise a registry; fork, async and remote are described as what they do today; each
 * package README names only what its package exports; a C++ toolchain is asked for only when
 * something native is built.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonSchema } from '@ryeos/mcp/tools';
import { SERVER_INSTRUCTIONS, TOOL_DEFINITIONS } from '@ryeos/mcp/tools';
import { describe, expect, it } from 'vitest';
import { commandUsage, helpText } from '../src/cli/help.js';
import type { ExecuteRequest } from '../src/index.js';
import { createRye, initWorkspace } from '../src/index.js';
import { useTempProjects } from './helpers.js';
import { PACKAGE_DIRS, REPO } from './package-helpers.js';

const project = useTempProjects();

/** Every description of a schema, however deep. */
function descriptions(schema: JsonSchema | undefined, path: string): [string, string][] {
  if (!schema) return [];
  const own: [string, string][] = schema.description ? [[path, schema.description]] : [];
  const nested = Object.entries(schema.properties ?? {}).flatMap(([name, child]) =>
    descriptions(child, `${path}.${name}`),
  );
  const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  return [...own, ...nested, ...descriptions(schema.items, `${path}[]`), ...descriptions(extra, `${path}{}`)];
}

const ALL_TEXTS: [string, string][] = [
  ['SERVER_INSTRUCTIONS', SERVER_INSTRUCTIONS],
  ...TOOL_DEFINITIONS.flatMap((tool): [string, string][] => [
    [tool.name, tool.description],
    ...descriptions(tool.inputSchema as JsonSchema, tool.name),
  ]),
];

const VERBS = ['init', 'execute', 'search', 'load', 'sign', 'keys', 'demo', 'help'];

describe('no registry is advertised', () => {
  it('in the MCP tool descriptions and the schema descriptions', () => {
    for (const [where, text] of ALL_TEXTS) expect(text, where).not.toMatch(/registry/i);
  });

  it('in the CLI help', () => {
    expect(helpText()).not.toMatch(/registry/i);
    for (const verb of VERBS) expect(commandUsage(verb), verb).not.toMatch(/registry/i);
  });
});

describe('fork, async and remote are described as what they do today', () => {
  it('the execute tool and its parameters say they are refused as unavailable', () => {
    const execute = TOOL_DEFINITIONS.find((t) => t.name === 'execute')!;
    expect(execute.description).toMatch(/thread "fork", async and remote targets are refused as unavailable/);
    for (const name of ['thread', 'async', 'target', 'model', 'limit_overrides']) {
      expect(execute.inputSchema.properties[name]!.description, name).toMatch(
        /unavailable|not available yet/,
      );
    }
    expect(SERVER_INSTRUCTIONS).not.toMatch(/\bfork|async|remote/);
  });

  it('the CLI help says so, and lists none of them as working', () => {
    expect(commandUsage('execute')).toMatch(
      /Not available yet[\s\S]*--thread fork[\s\S]*--async[\s\S]*--target remote/,
    );
    expect(helpText()).not.toMatch(/--thread|--async|--target/);
  });

  it('and that is what they do', async () => {
    const t = await project();
    const rye = createRye({ projectPath: t.project, userSpace: t.user });
    await initWorkspace(rye);
    const requests: ExecuteRequest[] = [
      { item_id: 'directive:example/greet', thread: 'fork' },
      { item_id: 'directive:example/greet', thread: 'fork', async: true },
      { item_id: 'tool:example/hello', async: true },
      { item_id: 'tool:example/hello', target: 'remote' },
      { item_id: 'directive:example/greet', target: 'remote:gpu', thread: 'fork' },
    ];
    for (const request of requests) {
      const result = await rye.execute(request);
      expect(result, JSON.stringify(request)).toMatchObject({ status: 'error', error_type: 'unavailable' });
    }
  });
});

/** Package name → its module, for the names a README imports. */
const MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  ryeos: () => import('../src/index.js'),
  '@ryeos/lillux': () => import('@ryeos/lillux'),
  '@ryeos/executor': () => import('@ryeos/executor'),
  '@ryeos/directives': () => import('@ryeos/directives'),
  '@ryeos/threads': () => import('@ryeos/threads'),
  '@ryeos/mcp': () => import('@ryeos/mcp'),
};

/** The value names each `import { … } from '<package>'` of a README's ts blocks takes. */
function importedNames(markdown: string): { from: string; names: string[] }[] {
  const blocks = [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((code) =>
    [...code.matchAll(/import\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)].map((m) => ({
      from: m[2]!,
      names: m[1]!
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name && !name.startsWith('type ')),
    })),
  );
}

describe('every package README matches its package', () => {
  it('imports only names its package exports, from itself', async () => {
    for (const dir of PACKAGE_DIRS) {
      const manifest = JSON.parse(await readFile(join(REPO, 'packages', dir, 'package.json'), 'utf8'));
      const readme = await readFile(join(REPO, 'packages', dir, 'README.md'), 'utf8');
      const imports = importedNames(readme);
      expect(imports.length, `${dir}/README.md has a TypeScript example`).toBeGreaterThan(0);
      for (const { from, names } of imports) {
        expect(from, dir).toBe(manifest.name);
        const exported = Object.keys(await MODULES[from]!());
        for (const name of names) expect(exported, `${from} exports ${name}`).toContain(name);
      }
    }
  });

  it('ryeos documents its API (createRye, Rye) and rye demo primitives', async () => {
    const readme = await readFile(join(REPO, 'packages', 'ryeos', 'README.md'), 'utf8');
    for (const text of ['createRye', 'Rye', 'rye demo primitives', 'createOperations', 'runCli', 'ryeos-mcp'])
      expect(readme).toContain(text);
  });

  it('@ryeos/threads names everything it exports, and claims nothing as done that it does not export', async () => {
    const readme = await readFile(join(REPO, 'packages', 'threads', 'README.md'), 'utf8');
    const exported = Object.keys(await import('@ryeos/threads'));
    for (const name of exported) expect(readme).toContain(name);
    // What is to come is said to be to come.
    expect(readme).toMatch(/in development/);
    expect(readme).toMatch(/will live here/);
  });
});

describe('the C++ toolchain', () => {
  it('is a prerequisite only when a package builds something native', async () => {
    const NATIVE = ['better-sqlite3'];
    let native = false;
    for (const dir of PACKAGE_DIRS) {
      const manifest = JSON.parse(await readFile(join(REPO, 'packages', dir, 'package.json'), 'utf8'));
      const deps = {
        ...manifest.dependencies,
        ...manifest.optionalDependencies,
        ...manifest.peerDependencies,
      };
      if (NATIVE.some((name) => name in deps)) native = true;
    }
    const texts = [
      await readFile(join(REPO, 'README.md'), 'utf8'),
      await readFile(join(REPO, '.ci', 'run'), 'utf8'),
      ...(await Promise.all(
        PACKAGE_DIRS.map((dir) => readFile(join(REPO, 'packages', dir, 'README.md'), 'utf8')),
      )),
    ];
    for (const text of texts) expect(/C\+\+|toolchain/i.test(text)).toBe(native);
  });
});
