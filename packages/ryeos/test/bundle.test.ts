/**
 * Every item shipped in the system bundles (ryeos, threads, executor) verifies, parses, and is
 * exercised by some test. A new bundle item without a test that names it fails here.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, relative } from 'node:path';
import { parseDirective, parseKnowledge } from '@ryeos/directives';
import type { ParameterSchema } from '@ryeos/executor';
import { Executor, executorBundle, extractToolMetadata, toolParameterSchema } from '@ryeos/executor';
import { normalizeNewlines } from '@ryeos/lillux';
import { beforeAll, describe, expect, it } from 'vitest';
import { threadsLayerBundle } from '../src/bundles.js';
import { packageRoot } from '../src/index.js';

/** The smallest valid call of a tool: a sample value for each required parameter. */
function sampleParameters(schema: ParameterSchema | undefined): Record<string, unknown> {
  if (!schema) return {};
  const properties = schema.properties ?? {};
  const alternatives = (schema.anyOf as Array<{ required: string[] }> | undefined)?.[0]?.required ?? [];
  const sample = (rule: Record<string, unknown> = {}): unknown => {
    if (Array.isArray(rule.enum)) return rule.enum[0];
    const type = Array.isArray(rule.type) ? rule.type[0] : rule.type;
    return { integer: 1, number: 1, boolean: false, object: {}, array: [] }[String(type)] ?? 'x';
  };
  const names = [...(schema.required ?? []), ...alternatives];
  return Object.fromEntries(names.map((name) => [name, sample(properties[name])]));
}

const ROOT = packageRoot();
const BUNDLES = [{ id: 'ryeos', root: ROOT }, threadsLayerBundle(), executorBundle()];
const KINDS = { tool: 'tools', directive: 'directives', knowledge: 'knowledge' } as const;
type Kind = keyof typeof KINDS;

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('_') || name.startsWith('.') || name === 'node_modules' || name === 'package.json')
      continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

const EXTENSIONS: Record<Kind, string[]> = {
  tool: ['.py', '.yaml', '.yml', '.js', '.ts', '.mjs', '.cjs', '.sh'],
  directive: ['.md'],
  knowledge: ['.md', '.yaml', '.yml'],
};

const items: { kind: Kind; id: string; path: string }[] = [];
for (const bundle of BUNDLES) {
  const ai = join(bundle.root, '.ai');
  for (const [kind, dir] of Object.entries(KINDS) as [Kind, string][]) {
    let files: string[];
    try {
      files = [...walk(join(ai, dir))];
    } catch {
      continue; // a bundle without this kind
    }
    for (const path of files) {
      const ext = extname(path);
      if (!EXTENSIONS[kind].includes(ext)) continue;
      // Files inside a runtime's lib/ are launchers, verified when used, not items of their own.
      if (/[\\/]runtimes[\\/](node|python)[\\/]lib[\\/]/.test(path)) continue;
      items.push({ kind, id: relative(join(ai, dir), path).slice(0, -ext.length), path });
    }
  }
}

/** All test sources of the workspace except this file: where an item must be named. */
function testSources(): string {
  const packages = join(ROOT, '..');
  let text = '';
  for (const pkg of readdirSync(packages)) {
    const dir = join(packages, pkg, 'test');
    try {
      for (const file of walk(dir)) {
        if (file.endsWith('.ts') && !file.endsWith('bundle.test.ts')) text += readFileSync(file, 'utf8');
      }
    } catch {
      // a package without tests
    }
  }
  return text;
}

describe('the system bundles', () => {
  let executor: Executor;
  let sources: string;
  beforeAll(async () => {
    executor = await Executor.create({
      projectPath: mkdtempSync(join(tmpdir(), 'rye-bundle-project-')),
      userSpace: mkdtempSync(join(tmpdir(), 'rye-bundle-user-')),
      systemBundles: BUNDLES,
      env: { PATH: process.env.PATH },
      metadataCacheDir: false,
    });
    sources = testSources();
  });

  it('has the items an agent needs on day one', () => {
    const refs = items.map((i) => `${i.kind}:${i.id}`);
    for (const ref of [
      'tool:rye/core/primitives/subprocess',
      'tool:rye/core/runtimes/node/node',
      'tool:rye/core/keys/keys',
      'tool:rye/core/init',
      'directive:init',
      'directive:rye/core/create_tool',
      'knowledge:rye/core/overview',
    ]) {
      expect(refs).toContain(ref);
    }
    expect(items.length).toBeGreaterThan(25);
  });

  it.each(items)('$kind:$id verifies, parses and is tested', async ({ kind, id, path }) => {
    const { verification } = await executor.verifyItemFile(kind, id, { only: 'system' });
    expect(verification).toMatchObject({ outcome: 'ok', verified: true });
    const text = normalizeNewlines(readFileSync(path, 'utf8'));
    if (kind === 'directive') {
      const directive = parseDirective(text, path);
      expect(directive.name).toBe(id.split('/').pop());
      expect(directive.description).toBeTruthy();
    } else if (kind === 'knowledge') {
      const knowledge = parseKnowledge(text, path, id);
      expect(knowledge.title).toBeTruthy();
      expect(knowledge.body.length).toBeGreaterThan(50);
    } else {
      const tools = await executor.kinds.get('tool');
      const metadata = extractToolMetadata(text, path, tools.parsers[extname(path)]!);
      expect(metadata.version).toMatch(/^\d+\.\d+\.\d+$/);
      if (metadata.executorId) {
        const dry = await executor.executeTool(id, sampleParameters(toolParameterSchema(metadata)), {
          dryRun: true,
        });
        expect(dry.status, JSON.stringify(dry)).toBe('validation_passed');
      }
    }
    const named =
      sources.includes(`${kind}:${id}`) || sources.includes(`'${id}'`) || sources.includes(`"${id}"`);
    expect(named, `no test names ${kind}:${id}`).toBe(true);
  });
});
