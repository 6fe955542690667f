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
  it('the execute tool says fork, async and remote targets run', () => {
    const execute = TOOL_DEFINITIONS.find((t) => t.name === 'execute')!;
    expect(execute.description).toMatch(/thread "fork" runs a directive in its own managed LLM thread/);
    expect(execute.description).toMatch(/async: true runs a forked directive \(or a tool\) detached/);
    expect(execute.description).toMatch(/target "remote\[:name\]" runs it on a ryeos-remote server/);
    expect(execute.inputSchema.properties.target!.description).toMatch(/remotes\.yaml/);
    for (const name of ['target', 'thread', 'model', 'limit_overrides', 'async']) {
      expect(execute.inputSchema.properties[name]!.description, name).not.toMatch(
        /unavailable|not available/,
      );
    }
    expect(SERVER_INSTRUCTIONS).not.toMatch(/\bfork|async|remote/);
  });

  it('the CLI help says so: fork, async and remote targets work', () => {
    expect(commandUsage('execute')).toMatch(/--thread fork/);
    expect(commandUsage('execute')).toMatch(/--async +run detached/);
    expect(commandUsage('execute')).toMatch(/--target remote +run on the default remote/);
    expect(commandUsage('execute')).not.toMatch(/Not available yet/);
    expect(helpText()).not.toMatch(/--async|--target/);
  });

  it('and that is what they do (fork without a provider set up says how to set one up)', async () => {
    const t = await project();
    const rye = createRye({ projectPath: t.project, userSpace: t.user, env: { USER_SPACE: t.user } });
    await initWorkspace(rye);
    const requests: ExecuteRequest[] = [
      { item_id: 'tool:example/hello', target: 'remote' },
      { item_id: 'directive:example/greet', target: 'remote:gpu', thread: 'fork' },
    ];
    // With no remote configured, each names the missing remote and how to add it.
    for (const request of requests) {
      const result = await rye.execute(request);
      expect(result, JSON.stringify(request)).toMatchObject({ status: 'error', error_type: 'not_found' });
      expect(String(result.hint)).toMatch(/rye remote add/);
    }
    // Without a provider, a fork fails at setup, synchronously, async or not.
    for (const async of [false, true]) {
      const fork = await rye.execute({ item_id: 'directive:example/greet', thread: 'fork', async });
      expect(fork).toMatchObject({ status: 'error', error_type: 'config' });
      expect(String(fork.hint)).toMatch(/ANTHROPIC_API_KEY|OPENAI_API_KEY/);
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
  '@ryeos/threads/testing': () => import('@ryeos/threads/testing'),
  '@ryeos/mcp': () => import('@ryeos/mcp'),
  '@ryeos/store-postgres': () => import('@ryeos/store-postgres'),
  '@ryeos/store-postgres/testing': () => import('@ryeos/store-postgres/testing'),
  '@ryeos/worker': () => import('@ryeos/worker'),
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
      const dependencies = Object.keys(manifest.dependencies ?? {});
      for (const { from, names } of imports) {
        // A complete example also imports Node's modules and what the package itself depends on
        // (an Executor to run a directive with, the MCP SDK's client); those names tsc checks.
        if (from.startsWith('node:')) continue;
        const ownDependency = dependencies.some((dep) => from === dep || from.startsWith(`${dep}/`));
        if (ownDependency && !from.startsWith('@ryeos/')) continue;
        // The package itself, one of its own subpath exports (`@ryeos/threads/testing`), or a ryeos layer it depends on.
        const itself = from === manifest.name || from.startsWith(`${manifest.name}/`);
        expect(itself || ownDependency, `${dir}: ${from}`).toBe(true);
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
    expect(readme).toMatch(/in\s+development/);
    expect(readme).toMatch(/will\s+live\s+here/);
  });
});

describe('the C++ toolchain', () => {
  it('is named as a prerequisite exactly where something native is built', async () => {
    const NATIVE = ['better-sqlite3'];
    const mentions = (text: string) => /C\+\+|toolchain/i.test(text);
    let native = false;
    for (const dir of PACKAGE_DIRS) {
      const manifest = JSON.parse(await readFile(join(REPO, 'packages', dir, 'package.json'), 'utf8'));
      const deps = {
        ...manifest.dependencies,
        ...manifest.optionalDependencies,
        ...manifest.peerDependencies,
      };
      const builds = NATIVE.some((name) => name in deps);
      native ||= builds;
      // A package that builds native code says so; one that does not never claims it.
      const readme = await readFile(join(REPO, 'packages', dir, 'README.md'), 'utf8');
      expect(mentions(readme), `packages/${dir}/README.md`).toBe(builds);
    }
    for (const file of ['README.md', join('.ci', 'run')]) {
      expect(mentions(await readFile(join(REPO, file), 'utf8')), file).toBe(native);
    }
  });
});
