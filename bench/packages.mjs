// What each package costs an embedder who installs it alone (issue 29): per package, its packed
// size, the size on disk of its installed dependency tree, the time to install it, and the time
// to import it in a fresh process; the six ryeos packages, then @modelcontextprotocol/sdk and ai
// from the registry, measured the same way.
//
// How each figure is taken:
//  - packed: bytes of the tarball (`pnpm pack` for ryeos packages, the registry's tarball, fetched
//    with `npm pack <spec>`, for the others);
//  - tree: bytes of the regular files under node_modules after a fresh install into an empty
//    project (pnpm links files from its store: each inode is counted once, symlinks not at all),
//    with the number of packages in it and those with a native build (a binding.gyp);
//  - install: median wall time of BENCH_INSTALLS (default 3) `pnpm install --prefer-offline`
//    into fresh projects, after one untimed install warmed the store (metadata, tarballs, and
//    pnpm's cache of built native modules: a cold store also compiles better-sqlite3, ~1 min);
//  - import: median wall time of BENCH_RUNS (default 15) fresh `node` processes that import the
//    package's main entry, minus the median of as many `node` processes importing nothing.
// A ryeos package is installed from its tarball, with the tarballs of the ryeos packages it
// depends on (pnpm.overrides), as the packaging test installs it. Needs the build and the npm
// registry: node bench/packages.mjs   (or pnpm bench packages for JSON lines)
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, round } from './lib/common.mjs';

const repo = join(import.meta.dirname, '..');
const PACKAGE_DIRS = ['lillux', 'executor', 'directives', 'threads', 'mcp', 'ryeos'];

/**
 * Registry packages compared, as a user on Node 20 gets them: ai 7 asks for Node 22 (engines
 * >=22), so its latest release line for Node 20 is 6. Each is imported where a user imports it:
 * the SDK's root export names no file, so its server entry (what an MCP server loads).
 */
const REGISTRY = [
  {
    spec: '@modelcontextprotocol/sdk@^1',
    name: '@modelcontextprotocol/sdk',
    entry: '@modelcontextprotocol/sdk/server/index.js',
  },
  { spec: 'ai@^6', name: 'ai', entry: 'ai' },
];

const manifestOf = (dir) => JSON.parse(readFileSync(join(repo, 'packages', dir, 'package.json'), 'utf8'));

/** The ryeos package and every ryeos package it depends on, directly or not. */
function closure(dir, seen = new Set()) {
  if (seen.has(dir)) return seen;
  seen.add(dir);
  for (const dep of Object.keys(manifestOf(dir).dependencies ?? {})) {
    const depDir = PACKAGE_DIRS.find((d) => manifestOf(d).name === dep);
    if (depDir) closure(depDir, seen);
  }
  return seen;
}

/** pnpm as the workspace runs it, without the outer run's settings. */
function pnpm(args, cwd) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm|pnpm)_/i.test(key)));
  const exec = process.env.npm_execpath;
  const [command, prefix] =
    exec && /pnpm\.c?js$/.test(exec) ? [process.execPath, [exec]] : ['npx', ['-y', 'pnpm@10.34.8']];
  const result = spawnSync(command, [...prefix, ...args], {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (result.status !== 0)
    throw new Error(`pnpm ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Bytes of the regular files under `dir`, each inode once; symlinks are not followed. */
function treeBytes(dir, seen = new Set()) {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += treeBytes(path, seen);
    else if (entry.isFile()) {
      const stat = lstatSync(path);
      const key = `${stat.dev}:${stat.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      bytes += stat.size;
    }
  }
  return bytes;
}

/** The packages pnpm installed (the entries of node_modules/.pnpm) and those with a native build. */
function treePackages(project) {
  const store = join(project, 'node_modules', '.pnpm');
  const entries = readdirSync(store).filter((name) => name !== 'node_modules' && !name.startsWith('lock'));
  const native = entries.filter((name) => {
    const at = name.lastIndexOf('@');
    const pkg = name.slice(0, at > 0 ? at : undefined).replace('+', '/');
    try {
      return statSync(join(store, name, 'node_modules', pkg, 'binding.gyp')).isFile();
    } catch {
      return false;
    }
  });
  return { count: entries.length, native: native.map((name) => name.slice(0, name.lastIndexOf('@'))) };
}

async function installInto(project, dependencies, overrides) {
  await mkdir(project, { recursive: true });
  const manifest = {
    name: 'bench-install',
    private: true,
    type: 'module',
    dependencies,
    pnpm: { overrides, onlyBuiltDependencies: ['better-sqlite3'] },
  };
  await writeFile(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const start = performance.now();
  pnpm(
    ['install', '--prefer-offline', '--ignore-workspace', '--no-frozen-lockfile', '--reporter=silent'],
    project,
  );
  return performance.now() - start;
}

function timeNode(cwd, script) {
  const start = performance.now();
  const result = spawnSync(process.execPath, [script], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`${script} failed: ${result.stderr}`);
  return performance.now() - start;
}

/** Median import time of `entry` in fresh processes, minus the median of a process importing nothing. */
async function importMs(project, entry, runs) {
  await writeFile(join(project, 'empty.mjs'), '');
  await writeFile(join(project, 'import.mjs'), `await import(${JSON.stringify(entry)});\n`);
  timeNode(project, 'import.mjs'); // the first run also warms the page cache
  const empty = [];
  const loaded = [];
  for (let i = 0; i < runs; i++) {
    empty.push(timeNode(project, 'empty.mjs'));
    loaded.push(timeNode(project, 'import.mjs'));
  }
  return { ms: median(loaded) - median(empty), nodeStartMs: median(empty) };
}

async function measure(root, subject, installs, runs) {
  const times = [];
  let project = '';
  for (let i = 0; i <= installs; i++) {
    if (project) await rm(project, { recursive: true, force: true });
    project = join(root, `${subject.label.replace(/[@/]/g, '_')}-${i}`);
    const ms = await installInto(project, subject.dependencies, subject.overrides);
    if (i > 0) times.push(ms); // install 0 warms the store
  }
  const version = JSON.parse(
    readFileSync(join(project, 'node_modules', subject.name, 'package.json'), 'utf8'),
  ).version;
  const tree = treePackages(project);
  const imported = await importMs(project, subject.entry, runs);
  const row = {
    bench: 'packages',
    package: subject.name,
    version,
    packed_bytes: subject.packedBytes,
    tree_bytes: treeBytes(join(project, 'node_modules')),
    tree_packages: tree.count,
    native_builds: tree.native,
    install_ms: round(median(times), 0),
    import_ms: round(imported.ms, 1),
    node_start_ms: round(imported.nodeStartMs, 1),
  };
  await rm(project, { recursive: true, force: true });
  return row;
}

export async function run({ quiet = false } = {}) {
  const installs = Number(process.env.BENCH_INSTALLS ?? 3);
  const runs = Number(process.env.BENCH_RUNS ?? 15);
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-packages-'));
  try {
    const packs = join(root, 'packs');
    await mkdir(packs);
    pnpm(['-r', '--filter', './packages/*', 'pack', '--pack-destination', packs], repo);
    const tarball = (dir) => {
      const { name, version } = manifestOf(dir);
      return join(packs, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`);
    };
    const subjects = PACKAGE_DIRS.map((dir) => {
      const { name } = manifestOf(dir);
      const overrides = Object.fromEntries(
        [...closure(dir)].map((d) => [manifestOf(d).name, `file:${tarball(d)}`]),
      );
      return {
        label: name,
        name,
        entry: name,
        dependencies: { [name]: `file:${tarball(dir)}` },
        overrides,
        packedBytes: statSync(tarball(dir)).size,
      };
    });
    for (const { spec, name, entry } of REGISTRY) {
      const fetched = join(root, 'registry', name.replace(/[@/]/g, '_'));
      await mkdir(fetched, { recursive: true });
      // The registry's own tarball of the version a fresh install resolves.
      const out = execFileSync(
        'npm',
        ['pack', spec, '--json', '--prefer-offline', '--pack-destination', fetched],
        {
          encoding: 'utf8',
          cwd: fetched,
        },
      );
      const [packed] = JSON.parse(out);
      subjects.push({
        label: name,
        name,
        entry,
        dependencies: { [name]: packed.version },
        overrides: {},
        packedBytes: statSync(join(fetched, packed.filename)).size,
      });
    }
    const rows = [];
    for (const subject of subjects) {
      if (!quiet) process.stderr.write(`# ${subject.name}\n`);
      rows.push(await measure(root, subject, installs, runs));
    }
    return rows;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const kb = (bytes) => `${round(bytes / 1024, 0)} kB`;
const mb = (bytes) => `${round(bytes / 1024 / 1024, 1)} MB`;

function table(rows) {
  const header = [
    'package',
    'version',
    'packed',
    'installed tree',
    'packages',
    'native',
    'install',
    'import',
  ];
  const body = rows.map((r) => [
    r.package,
    r.version,
    kb(r.packed_bytes),
    mb(r.tree_bytes),
    String(r.tree_packages),
    r.native_builds.join(' ') || '-',
    `${round(r.install_ms / 1000, 2)} s`,
    `${r.import_ms} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** Each ryeos package against the registry packages: how many times their tree, install and import. */
function comparison(rows) {
  const others = rows.filter((r) => REGISTRY.some((p) => p.name === r.package));
  const times = (a, b) => (b > 0 ? `${round(a / b, 2)}x` : 'n/a');
  const lines = [
    `Compared with ${others.map((o) => `${o.package} ${o.version}`).join(' and ')} (tree / install / import):`,
  ];
  for (const row of rows.filter((r) => !others.includes(r))) {
    const against = others.map(
      (o) =>
        `${times(row.tree_bytes, o.tree_bytes)} / ${times(row.install_ms, o.install_ms)} / ${times(row.import_ms, o.import_ms)} of ${o.package}`,
    );
    lines.push(`  ${row.package}: ${against.join('; ')}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await run();
  console.log(table(rows));
  console.log(`\n${comparison(rows)}`);
  const start = rows[0]?.node_start_ms;
  console.log(
    `\ninstall: median of ${process.env.BENCH_INSTALLS ?? 3} fresh installs, warm pnpm store; import: median of ${process.env.BENCH_RUNS ?? 15} fresh processes minus an empty node start (${start} ms); tree: file bytes, hard links once. Import times drift with the machine's load: compare rows of one run.`,
  );
}
