/**
 * Code no signature covers that an interpreter runs anyway (issue 28, points 7, 12 and 22): the
 * python runtimes' bytecode cache is used only when only the user can write it, and is written and
 * reused even when the host sets PYTHONDONTWRITEBYTECODE=1; a snapshot file replaced after it was
 * checked is checked again.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const importsJson = (marker: string) =>
  `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "victim"\nimport json, os\nprint(json.dumps({"success": True, "planted": os.path.exists(${JSON.stringify(marker)})}))\n`;

const pythonEnv = (extra: Record<string, string> = {}) =>
  toolEnv({ ...(process.env.HOME ? { HOME: process.env.HOME } : {}), ...extra });

/** Writes, under `prefix`, the bytecode python would take for the standard library's json package. */
function plantJsonBytecode(prefix: string, marker: string): void {
  const script = [
    'import importlib._bootstrap_external as ext, importlib.util, os, sys, json',
    'source = json.__file__',
    'st = os.stat(source)',
    "payload = \"open(%r, 'w').write('pwned')\\n\" % sys.argv[1]",
    'code = compile(payload + open(source).read(), source, "exec")',
    'target = importlib.util.cache_from_source(source)',
    'os.makedirs(os.path.dirname(target), exist_ok=True)',
    'open(target, "wb").write(ext._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))',
  ].join('\n');
  execFileSync('python3', ['-c', script, marker], {
    env: { ...process.env, PYTHONPYCACHEPREFIX: prefix, PYTHONDONTWRITEBYTECODE: '1' },
  });
}

describe("the python runtimes' bytecode cache", () => {
  it('is refused when others can write to it, so bytecode planted there for the standard library never runs', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await ws.write('project', 'tools/victim/uses_json.py', importsJson(marker));
    const prefix = join(ws.user, '.ai', 'state', 'cache', 'pycache');
    await mkdir(prefix, { recursive: true });
    await chmod(prefix, 0o777);
    plantJsonBytecode(prefix, marker);
    const executor = await ws.executor(pythonEnv());
    const result = await executor.executeTool('victim/uses_json');
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(result.error)).toMatch(/bytecode cache .* writable by group or others/);
  });

  it('is a private folder, written and then reused even when the host sets PYTHONDONTWRITEBYTECODE=1', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await ws.write('project', 'tools/victim/uses_json.py', importsJson(marker));
    const executor = await ws.executor(pythonEnv({ PYTHONDONTWRITEBYTECODE: '1' }));
    expect(await executor.executeTool('victim/uses_json')).toMatchObject({
      status: 'success',
      data: { planted: false },
    });
    const prefix = join(ws.user, '.ai', 'state', 'cache', 'pycache');
    expect(statSync(prefix).mode & 0o077).toBe(0);
    const cached = readdirSync(prefix, { recursive: true }).map(String);
    expect(cached.some((path) => /json[/\\]__init__\.[^/\\]*\.pyc$/.test(path))).toBe(true);
  });
});

describe('a snapshot a long-lived host already checked (issue 28, point 7)', () => {
  it('is not run once one of its files was replaced: the next run checks the bytes again', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/hello.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "victim"\nimport json\nprint(json.dumps({"success": True, "who": "signed"}))\n',
    );
    const executor = await ws.executor(pythonEnv());
    expect(await executor.executeTool('victim/hello')).toMatchObject({ data: { who: 'signed' } });
    const snapshots = join(ws.user, '.ai', 'state', 'snapshots');
    const copy = readdirSync(snapshots, { recursive: true })
      .map(String)
      .find((path) => path.endsWith('hello.py'))!;
    const planted = join(snapshots, 'planted.py');
    writeFileSync(planted, 'import json\nprint(json.dumps({"success": True, "who": "planted"}))\n');
    renameSync(planted, join(snapshots, copy));
    expect(await executor.executeTool('victim/hello')).toMatchObject({ data: { who: 'signed' } });
  });
});
