/**
 * Attack 4 of the integrity review: unverified code beside verified code. A signed tool loads only
 * verified files and the interpreter's own installation: no planted bytecode, no project module
 * shadowing the standard library, no unsigned sibling, nothing from folders or file types that
 * verify_deps never checks.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const env = toolEnv;

const pyFunction = (category: string, body: string) =>
  `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/function"\n__category__ = "${category}"\n${body}\n`;

const pyMarker = (marker: string) => `open(${JSON.stringify(marker)}, "w").write("pwned")\n`;

const RYEOS_MODULES = join(import.meta.dirname, '..', '..', '..', 'ryeos', 'node_modules');

/** Links packages ryeos depends on (tsx, yaml) into `<base>/node_modules`: an installation. */
async function install(base: string, ...names: string[]): Promise<void> {
  await mkdir(join(base, 'node_modules'), { recursive: true });
  for (const name of names) await symlink(join(RYEOS_MODULES, name), join(base, 'node_modules', name));
}

/** A TypeScript tool importing the `yaml` package and the `os` builtin by bare name. */
const TS_IMPORTER = (category: string) =>
  [
    "export const __version__: string = '1.0.0';",
    "export const __executor_id__ = 'rye/core/runtimes/node/node';",
    `export const __category__ = '${category}';`,
    "import YAML from 'yaml';",
    "import os from 'os';",
    'const out: string = YAML.stringify({ who: "signed" });',
    'console.log(JSON.stringify({ success: true, out, eol: os.EOL }));',
  ].join('\n');

/**
 * A project tsconfig.json whose `paths` send `yaml` and `os` to a project file that writes
 * `marker` (tsx reads tsconfig.json from the working directory up: the project).
 */
async function plantTsconfig(project: string, marker: string): Promise<void> {
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        baseUrl: '.',
        paths: { yaml: ['./evil.cjs'], os: ['./evil.cjs'], '@lib/*': ['./evil.cjs'] },
      },
    }),
  );
  await writeFile(
    join(project, 'evil.cjs'),
    `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'pwned');\n` +
      "module.exports = { stringify: () => 'evil', EOL: 'evil' };\n",
  );
}

/**
 * Compiles `source` to the bytecode cache file Python would use for `sourcePath`, stamped with
 * the real source's mtime and size so the interpreter believes it is current.
 */
function plantPyc(sourcePath: string, source: string, target?: string): string {
  const script = `
import importlib.util, importlib._bootstrap_external as ext, os, sys
src, code_text, target = sys.argv[1], sys.argv[2], sys.argv[3]
st = os.stat(src)
code = compile(code_text, src, "exec")
data = ext._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)
path = target or importlib.util.cache_from_source(src)
os.makedirs(os.path.dirname(path), exist_ok=True)
open(path, "wb").write(data)
print(path)
`;
  return execFileSync('python3', ['-c', script, sourcePath, source, target ?? ''], {
    encoding: 'utf8',
  }).trim();
}

describe('a signed tool loads only verified files', () => {
  it('a planted __pycache__ .pyc with the source mtime and size never runs instead of the source', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const path = await ws.write(
      'project',
      'tools/victim/cached.py',
      pyFunction('victim', 'def execute(params, project_path):\n    return {"who": "signed"}'),
    );
    const pyc = plantPyc(
      path,
      `${pyMarker(marker)}def execute(params, project_path):\n    return {"who": "evil"}\n`,
    );
    expect(existsSync(pyc)).toBe(true);
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/cached')).toMatchObject({
      status: 'success',
      data: { who: 'signed' },
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('an unsigned json.py in the project root does not shadow the standard library in a signed user tool', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await writeFile(
      join(ws.project, 'json.py'),
      `${pyMarker(marker)}def dumps(*a, **k):\n    return '{"who": "evil"}'\n`,
    );
    await writeFile(join(ws.project, 'inspect.py'), pyMarker(marker));
    await ws.write(
      'user',
      'tools/victim/stdlib.py',
      pyFunction('victim', 'def execute(params, project_path):\n    return {"who": "signed"}'),
    );
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/stdlib')).toMatchObject({
      status: 'success',
      data: { who: 'signed' },
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('an unsigned sibling module is not importable by a tool without an anchor', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await ws.write(
      'project',
      'tools/victim/sibling.py',
      pyFunction(
        'victim',
        'def execute(params, project_path):\n    import helper\n    return {"who": helper.WHO}',
      ),
    );
    await writeFile(
      join(ws.project, '.ai', 'tools', 'victim', 'helper.py'),
      `${pyMarker(marker)}WHO = "evil"\n`,
    );
    const executor = await ws.executor(env());
    const result = await executor.executeTool('victim/sibling');
    expect(result.status).toBe('error');
    expect(String(result.error)).toMatch(/No module named 'helper'/);
    expect(existsSync(marker)).toBe(false);
  });

  it('with an anchor, a config/ folder and a sourceless .pyc are never loaded, signed siblings are', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const dir = join(ws.project, '.ai', 'tools', 'victim', 'pkg');
    await ws.write('project', 'tools/victim/pkg/__init__.py', '');
    await ws.write('project', 'tools/victim/pkg/good.py', 'WHO = "signed-sibling"\n');
    await ws.write(
      'project',
      'tools/victim/pkg/anchored.py',
      pyFunction(
        'victim/pkg',
        [
          'def execute(params, project_path):',
          '    import good',
          '    found = []',
          '    for name in ("config.settings", "compiled"):',
          '        try:',
          '            __import__(name)',
          '            found.append(name)',
          '        except ImportError:',
          '            pass',
          '    return {"who": good.WHO, "loaded": found}',
        ].join('\n'),
      ),
    );
    await mkdir(join(dir, 'config'), { recursive: true });
    await writeFile(join(dir, 'config', '__init__.py'), '');
    await writeFile(join(dir, 'config', 'settings.py'), pyMarker(marker));
    plantPyc(join(dir, 'good.py'), pyMarker(marker), join(dir, 'compiled.pyc'));
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/pkg/anchored')).toMatchObject({
      status: 'success',
      data: { who: 'signed-sibling', loaded: [] },
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('a node tool cannot import an unverified .json file beside it', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/data.js',
      [
        "export const __version__ = '1.0.0';",
        "export const __executor_id__ = 'rye/core/runtimes/node/node';",
        "export const __category__ = 'victim';",
        'let data = null;',
        "try { data = (await import('./settings.json', { with: { type: 'json' } })).default; } catch {}",
        'console.log(JSON.stringify({ success: true, data }));',
      ].join('\n'),
    );
    await writeFile(join(ws.project, '.ai', 'tools', 'victim', 'package.json'), '{"type":"module"}');
    await writeFile(join(ws.project, '.ai', 'tools', 'victim', 'settings.json'), '{"target": "http://evil"}');
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/data')).toMatchObject({
      status: 'success',
      data: { data: null },
    });
  });

  it("a project tsconfig.json's paths do not redirect a signed user TypeScript tool's imports", async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await plantTsconfig(ws.project, marker);
    // The user's own installation serves the user tool: tsx and yaml.
    await install(ws.user, 'tsx', 'yaml');
    await ws.write('user', 'tools/mine/importer.ts', TS_IMPORTER('mine'));
    const result = await (await ws.executor(env())).executeTool('mine/importer');
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ status: 'success', data: { out: 'who: signed\n', eol: '\n' } });
  });

  it('a project TypeScript tool reads no tsconfig.json either: no paths, no aliases into unverified files', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await plantTsconfig(ws.project, marker);
    await install(ws.project, 'tsx', 'yaml');
    await ws.write('project', 'tools/victim/importer.ts', TS_IMPORTER('victim'));
    await ws.write(
      'project',
      'tools/victim/aliased.ts',
      [
        "export const __version__: string = '1.0.0';",
        "export const __executor_id__ = 'rye/core/runtimes/node/node';",
        "export const __category__ = 'victim';",
        "import { stringify } from '@lib/helper';",
        'console.log(JSON.stringify({ success: true, out: stringify() }));',
      ].join('\n'),
    );
    const executor = await ws.executor(env());
    const result = await executor.executeTool('victim/importer');
    const aliased = await executor.executeTool('victim/aliased');
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ status: 'success', data: { out: 'who: signed\n', eol: '\n' } });
    expect(aliased.status).toBe('error');
    expect(String(aliased.error)).toMatch(/Cannot find package '@lib\/helper'/);
  });

  it('a TypeScript tool leaves no tsx transform cache in the shared temp folder, where a planted entry would run', async () => {
    const ws = await workspace();
    const tmp = join(ws.root, 'tmp');
    await mkdir(tmp);
    await install(ws.user, 'tsx', 'yaml');
    await ws.write('user', 'tools/mine/cached.ts', TS_IMPORTER('mine'));
    const result = await (await ws.executor(env({ TMPDIR: tmp }))).executeTool('mine/cached');
    expect(result).toMatchObject({ status: 'success', data: { out: 'who: signed\n' } });
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('a tsx too old to be kept from reading tsconfig.json is never loaded', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const tsx = join(ws.user, 'node_modules', 'tsx');
    await mkdir(tsx, { recursive: true });
    await writeFile(
      join(tsx, 'package.json'),
      JSON.stringify({
        name: 'tsx',
        version: '4.10.5',
        exports: { './esm/api': { import: { default: './api.mjs' } } },
      }),
    );
    await writeFile(
      join(tsx, 'api.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'old');\nexport const register = () => {};\n`,
    );
    await ws.write('user', 'tools/mine/plain.ts', TS_IMPORTER('mine').replace(/^import .*$/gm, ''));
    const result = await (await ws.executor(env())).executeTool('mine/plain');
    expect(result.status).toBe('error');
    expect(String(result.error)).toMatch(/tsx 4\.11 or later is not installed/);
    expect(existsSync(marker)).toBe(false);
  });

  it('bytecode goes to a private cache under the user space, not beside the sources', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/victim/pkg2/__init__.py', '');
    await ws.write('project', 'tools/victim/pkg2/helper2.py', 'WHO = "signed"\n');
    await ws.write(
      'project',
      'tools/victim/pkg2/uses.py',
      pyFunction(
        'victim/pkg2',
        'def execute(params, project_path):\n    import helper2\n    return {"who": helper2.WHO}',
      ),
    );
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/pkg2/uses')).toMatchObject({
      status: 'success',
      data: { who: 'signed' },
    });
    expect(existsSync(join(ws.project, '.ai', 'tools', 'victim', 'pkg2', '__pycache__'))).toBe(false);
    expect(statSync(join(ws.user, '.ai', 'state', 'cache', 'pycache')).isDirectory()).toBe(true);
  });
});
