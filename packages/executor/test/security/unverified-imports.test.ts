/**
 * Attack 4 of the integrity review: unverified code beside verified code. A signed tool loads only
 * verified files and the interpreter's own installation: no planted bytecode, no project module
 * shadowing the standard library, no unsigned sibling, nothing from folders or file types that
 * verify_deps never checks.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const env = toolEnv;

const pyFunction = (category: string, body: string) =>
  `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/function"\n__category__ = "${category}"\n${body}\n`;

const pyMarker = (marker: string) => `open(${JSON.stringify(marker)}, "w").write("pwned")\n`;

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
