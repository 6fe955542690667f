/**
 * The executor ships the items it resolves by fixed id (extractors, primitives, the standard
 * runtimes) in its own signed bundle, and an Executor built without `systemBundles` finds them:
 * an embedder who installs only @ryeos/executor can run a signed tool at once.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateKeyPair } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTOR_BUNDLE_ID, Executor, executorBundle } from '../src/index.js';
import { signText, trust } from './helpers/workspace.js';

const PY_TOOL = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "demo"
import json, sys
params = json.load(sys.stdin)
print(json.dumps({"success": True, "greeting": "hello " + params["name"]}))
`;

const JS_TOOL = `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
let input = '';
for await (const chunk of process.stdin) input += chunk;
console.log(JSON.stringify({ success: true, upper: JSON.parse(input).text.toUpperCase() }));
`;

describe('an executor built without systemBundles', () => {
  let root: string;
  let executor: Executor;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rye-own-bundle-'));
    const project = join(root, 'project');
    const user = join(root, 'user');
    const key = generateKeyPair();
    await trust(user, key, 'me');
    for (const [rel, text] of [
      ['demo/greet.py', PY_TOOL],
      ['demo/upper.mjs', JS_TOOL],
    ] as const) {
      const path = join(project, '.ai', 'tools', rel);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, signText(text, path, key));
    }
    executor = await Executor.create({
      projectPath: project,
      userSpace: user,
      env: { PATH: process.env.PATH },
      metadataCacheDir: false,
    });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("has the executor's own bundle, shipped in this package, as its system space", () => {
    const bundle = executorBundle();
    expect(bundle.id).toBe(EXECUTOR_BUNDLE_ID);
    expect(executor.spaces.system.map((space) => space.bundleId)).toEqual([EXECUTOR_BUNDLE_ID]);
    expect(existsSync(join(bundle.root, '.ai', 'bundle.index'))).toBe(true);
    expect(
      existsSync(join(bundle.root, '.ai', 'tools', 'rye', 'core', 'primitives', 'subprocess.yaml')),
    ).toBe(true);
  });

  it('runs a signed Python tool through the standard python runtime', async () => {
    const result = await executor.executeTool('demo/greet', { name: 'ada' });
    expect(result).toMatchObject({
      status: 'success',
      data: { success: true, greeting: 'hello ada' },
      chain: ['demo/greet', 'rye/core/runtimes/python/script', 'rye/core/primitives/subprocess'],
    });
  });

  it('runs a signed node tool through the standard node runtime', async () => {
    const result = await executor.executeTool('demo/upper', { text: 'abc' });
    expect(result).toMatchObject({
      status: 'success',
      data: { success: true, upper: 'ABC' },
      chain: ['demo/upper', 'rye/core/runtimes/node/node', 'rye/core/primitives/subprocess'],
    });
  });

  it('without its bundle, says which package ships the extractors (not a package the embedder lacks)', async () => {
    const bare = await Executor.create({
      projectPath: executor.spaces.projectPath,
      userSpace: executor.spaces.user.base,
      systemBundles: [],
      metadataCacheDir: false,
    });
    const result = await bare.executeTool('demo/greet', { name: 'ada' });
    expect(result).toMatchObject({ status: 'error', error_type: 'config' });
    expect(result.hint).toMatch(/@ryeos\/executor.*executorBundle\(\)/);
    expect(JSON.stringify(result)).not.toMatch(/reinstall ryeos/);
  });

  it('adds a bundle by deriving a copy once, keeping its own bundle', async () => {
    const extra = { id: 'extra', root: join(root, 'extra') };
    const derived = await executor.withSystemBundle(extra);
    expect(derived).not.toBe(executor);
    expect(await executor.withSystemBundle(extra)).toBe(derived);
    expect(await derived.withSystemBundle(extra)).toBe(derived);
    // The first bundle is `{system_space}`: a derived executor keeps it first.
    expect(derived.spaces.system.map((space) => space.bundleId)).toEqual([EXECUTOR_BUNDLE_ID, 'extra']);
    expect(derived.spaces.systemSpace).toBe(executor.spaces.systemSpace);
    expect(derived.spaces.projectPath).toBe(executor.spaces.projectPath);
    expect(derived.settings).toBe(executor.settings);
  });
});

describe('finding a layer package from code a host bundled into its own files', () => {
  // In a plain node process (the test runner resolves workspace packages from anywhere).
  const rootOf = (moduleUrl: string) => {
    const script = `
      const { packageRootOf } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', 'dist', 'index.js')).href)});
      try { console.log(packageRootOf(${JSON.stringify(moduleUrl)}, '@ryeos/executor')); }
      catch (error) { console.log(error.code + ': ' + error.message); }`;
    return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    }).stdout.trim();
  };

  it('resolves it as a dependency, never from a folder above the host that claims its name', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rye-package-root-'));
    try {
      // A project that names itself @ryeos/executor, with a host installed in it.
      await writeFile(join(root, 'package.json'), JSON.stringify({ name: '@ryeos/executor' }));
      const host = join(root, 'node_modules', 'host');
      await mkdir(join(host, 'dist'), { recursive: true });
      await writeFile(join(host, 'package.json'), JSON.stringify({ name: 'host' }));
      const moduleUrl = pathToFileURL(join(host, 'dist', 'bin.js')).href;
      expect(rootOf(moduleUrl)).toMatch(/^CONFIG: Cannot find the folder of the @ryeos\/executor package/);
      // Installed beside the host, it is found there.
      const installed = join(root, 'node_modules', '@ryeos', 'executor');
      await mkdir(installed, { recursive: true });
      await writeFile(
        join(installed, 'package.json'),
        JSON.stringify({ name: '@ryeos/executor', exports: { './package.json': './package.json' } }),
      );
      expect(rootOf(moduleUrl)).toBe(installed);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
