/**
 * Issue 11 item 9, installable as users install: every package carries a LICENSE, `repository`,
 * `homepage` and the `engines` it needs; the packed tarballs install and run without the
 * workspace, and without tsx (an optional peer, loaded only for `.ts` tools); publint and attw
 * run in the test script.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_DIRS, pnpmCommand, REPO, runCommand } from './package-helpers.js';

type Manifest = {
  name: string;
  version?: string;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  engines?: { node?: string };
  files?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  scripts?: Record<string, string>;
};

const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(REPO, 'packages', dir, 'package.json'), 'utf8'));

/** The lowest Node version a `>=X[.Y[.Z]]` range accepts, as [major, minor, patch]. */
function minimum(range: string | undefined): number[] {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range ?? '');
  if (!match) throw new Error(`engines.node is not a ">=" range: ${range}`);
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

const atLeast = (a: number[], b: number[]) =>
  a[0]! !== b[0]! ? a[0]! > b[0]! : a[1]! !== b[1]! ? a[1]! > b[1]! : a[2]! >= b[2]!;

describe('each package as published', () => {
  it('has a LICENSE file, repository and homepage fields, and engines', () => {
    for (const dir of PACKAGE_DIRS) {
      const pkg = manifest(dir);
      expect(existsSync(join(REPO, 'packages', dir, 'LICENSE')), `${dir}/LICENSE`).toBe(true);
      expect(readFileSync(join(REPO, 'packages', dir, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
      expect(pkg.license, dir).toBe('MIT');
      expect(pkg.repository, dir).toMatchObject({
        type: 'git',
        url: expect.stringMatching(/^git\+https:\/\/.+\.git$/),
        directory: `packages/${dir}`,
      });
      expect(pkg.homepage, dir).toMatch(/^https:\/\//);
      expect(() => minimum(pkg.engines?.node), dir).not.toThrow();
    }
  });

  it('asks for the Node it uses: module.register (20.6), AbortSignal.any (20.3), and its dependencies’', () => {
    const launcher = readFileSync(
      join(REPO, 'packages/executor/.ai/tools/rye/core/runtimes/node/lib/launch.mjs'),
      'utf8',
    );
    expect(launcher).toMatch(/import Module, \{[^}]*\bregister\b[^}]*\} from 'node:module'/);
    // The node runtime's launcher ships in the executor's bundle.
    expect(atLeast(minimum(manifest('executor').engines?.node), [20, 6, 0])).toBe(true);
    expect(atLeast(minimum(manifest('ryeos').engines?.node), [20, 6, 0])).toBe(true);
    expect(readFileSync(join(REPO, 'packages/lillux/src/http/request.ts'), 'utf8')).toContain(
      'AbortSignal.any',
    );
    expect(atLeast(minimum(manifest('lillux').engines?.node), [20, 3, 0])).toBe(true);
    // A package needs at least what the packages it depends on need.
    for (const dir of PACKAGE_DIRS) {
      const own = minimum(manifest(dir).engines?.node);
      for (const dep of Object.keys(manifest(dir).dependencies ?? {})) {
        if (!dep.startsWith('@ryeos/')) continue;
        const theirs = minimum(manifest(dep.slice('@ryeos/'.length)).engines?.node);
        expect(atLeast(own, theirs), `${dir} needs what ${dep} needs`).toBe(true);
      }
    }
    const root = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Manifest;
    expect(atLeast(minimum(root.engines?.node), [20, 6, 0])).toBe(true);
  });

  it('tsx is an optional peer of ryeos (esbuild comes only with it), used by the tests as a dev dependency', () => {
    const ryeos = manifest('ryeos');
    expect(ryeos.dependencies).not.toHaveProperty('tsx');
    expect(ryeos.peerDependencies).toHaveProperty('tsx');
    expect(ryeos.peerDependenciesMeta?.tsx?.optional).toBe(true);
    expect(ryeos.devDependencies).toHaveProperty('tsx');
    for (const dir of PACKAGE_DIRS) {
      for (const name of ['tsx', 'esbuild'])
        expect(manifest(dir).dependencies ?? {}, `${dir} depends on ${name}`).not.toHaveProperty(name);
    }
  });

  it('publint and attw check every package in the test script, after the build, before the tests', () => {
    const root = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Manifest;
    const test = root.scripts?.test ?? '';
    const build = test.indexOf('turbo run build');
    const check = test.indexOf('pnpm run check:packages');
    expect(build).toBeGreaterThanOrEqual(0);
    expect(check).toBeGreaterThan(build);
    expect(test.indexOf('vitest run')).toBeGreaterThan(check);
    expect(root.scripts?.['check:packages']).toMatch(/publint --strict/);
    expect(root.scripts?.['check:packages']).toMatch(/attw --pack \. --profile esm-only/);
    expect(root.devDependencies).toMatchObject({ publint: 'catalog:', '@arethetypeswrong/cli': 'catalog:' });
    // Versions that run on the Node 20 the project supports.
    for (const name of ['publint', '@arethetypeswrong/cli']) {
      const path = join(REPO, 'node_modules', name, 'package.json');
      const installed = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
      expect(atLeast([20, 6, 0], minimum(installed.engines?.node)), name).toBe(true);
    }
  });
});

describe('installed from the packed tarballs, as a user installs', () => {
  let root = '';
  let modules = '';
  const tarballs = new Map<string, string>();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rye-install-'));
    const packs = join(root, 'packs');
    await mkdir(packs);
    const [command, prefix] = pnpmCommand();
    const packed = await runCommand(
      command,
      [...prefix, '-r', '--filter', './packages/*', 'pack', '--pack-destination', packs],
      { cwd: REPO, env: process.env, timeoutMs: 120_000 },
    );
    expect(packed.code, packed.stderr).toBe(0);
    for (const file of await readdir(packs)) tarballs.set(file, join(packs, file));

    // node_modules as npm lays it out: the six packages, and their third-party dependencies
    // (taken from the workspace's store). No tsx.
    modules = join(root, 'node_modules');
    for (const dir of PACKAGE_DIRS) {
      const pkg = manifest(dir);
      const target = join(modules, pkg.name);
      await mkdir(target, { recursive: true });
      const tarball = tarballs.get(`${pkg.name.replace('@', '').replace('/', '-')}-${pkg.version}.tgz`);
      expect(tarball, pkg.name).toBeDefined();
      const untar = spawnSync('tar', ['-xzf', tarball!, '-C', target, '--strip-components=1']);
      expect(untar.status, String(untar.stderr)).toBe(0);
      for (const dep of Object.keys(pkg.dependencies ?? {})) {
        if (dep.startsWith('@ryeos/') || existsSync(join(modules, dep))) continue;
        await mkdir(dirname(join(modules, dep)), { recursive: true });
        await symlink(realpathSync(join(REPO, 'packages', dir, 'node_modules', dep)), join(modules, dep));
      }
    }
  }, 180_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('each tarball holds its LICENSE, README and build, with no workspace or catalog ranges', async () => {
    for (const dir of PACKAGE_DIRS) {
      const pkg = manifest(dir);
      const installed = join(modules, pkg.name);
      for (const file of ['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts'])
        expect(existsSync(join(installed, file)), `${pkg.name}: ${file}`).toBe(true);
      const text = await readFile(join(installed, 'package.json'), 'utf8');
      expect(text, pkg.name).not.toMatch(/"(workspace|catalog):/);
      expect(JSON.parse(text).engines).toEqual(pkg.engines);
    }
    expect(existsSync(join(modules, 'ryeos', '.ai', 'tools', 'rye', 'bash.js'))).toBe(true);
  });

  it('runs JavaScript tools without tsx, and says what to install for a TypeScript tool', async () => {
    const cli = join(modules, 'ryeos', 'dist', 'rye.cjs');
    const project = join(root, 'project');
    // A clean environment: pnpm's NODE_PATH (set for this test run) would find the workspace's tsx.
    const env = { PATH: process.env.PATH ?? '', USER_SPACE: join(root, 'user') };
    const resolveTsx = `try { require('node:module').createRequire(${JSON.stringify(cli)}).resolve('tsx/package.json'); console.log('found') } catch { console.log('missing') }`;
    const probe = await runCommand(process.execPath, ['-e', resolveTsx], { cwd: root, env });
    expect(probe.stdout).toBe('missing\n');
    const rye = (...args: string[]) => runCommand(process.execPath, [cli, ...args], { cwd: project, env });
    await mkdir(project);

    expect((await rye('init')).code).toBe(0);
    const hello = await rye('execute', 'tool:example/hello', '--params', '{"name": "user"}');
    expect(JSON.parse(hello.stdout), hello.stderr).toMatchObject({
      status: 'success',
      data: { greeting: 'Hello, user!' },
    });

    await mkdir(join(project, '.ai', 'tools', 'acme'), { recursive: true });
    await writeFile(
      join(project, '.ai', 'tools', 'acme', 'typed.ts'),
      'export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "acme";\nexport const __tool_description__ = "A TypeScript tool";\nconst n: number = 2;\nconsole.log(JSON.stringify({ success: true, n }));\n',
    );
    const signed = await rye('sign', 'tool:acme/typed');
    expect(signed.code, signed.stdout).toBe(0);
    const missing = await rye('execute', 'tool:acme/typed');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/TypeScript tool[\s\S]*tsx[\s\S]*install/);

    // Installed next to ryeos, tsx is found and the tool runs.
    await symlink(realpathSync(join(REPO, 'packages', 'ryeos', 'node_modules', 'tsx')), join(modules, 'tsx'));
    const typed = await rye('execute', 'tool:acme/typed');
    expect(JSON.parse(typed.stdout), typed.stderr).toMatchObject({ status: 'success', data: { n: 2 } });
  }, 120_000);
});
