import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRyeError } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { openThreadStore } from '../src/store/index.js';
import { setDriverLoader } from '../src/store/sqlite-driver.js';

const packageDir = join(import.meta.dirname, '..');

describe('better-sqlite3 is optional', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    setDriverLoader(undefined);
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('a store opened without the driver fails with CONFIG naming the package and how to install it', async () => {
    setDriverLoader(() => {
      throw Object.assign(new Error("Cannot find module 'better-sqlite3'\nRequire stack:\n- /x"), {
        code: 'MODULE_NOT_FOUND',
      });
    });
    const project = mkdtempSync(join(tmpdir(), 'rye-driver-'));
    dirs.push(project);
    let thrown: unknown;
    try {
      openThreadStore(join(project, '.ai', 'state', 'threads'));
    } catch (error) {
      thrown = error;
    }
    expect(isRyeError(thrown)).toBe(true);
    const error = thrown as import('@ryeos/lillux').RyeError;
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('better-sqlite3');
    expect(error.message).not.toContain('Require stack');
    expect(error.hint).toContain('npm install better-sqlite3');
    expect(error.hint).toContain('C++ toolchain');
    expect(error.details).toMatchObject({ package: 'better-sqlite3' });
  });

  it('the installed driver is used again once the loader is reset', async () => {
    setDriverLoader(() => {
      throw new Error('gone');
    });
    setDriverLoader(undefined);
    const project = mkdtempSync(join(tmpdir(), 'rye-driver-'));
    dirs.push(project);
    const store = openThreadStore(join(project, '.ai', 'state', 'threads'));
    store.close();
  });

  it('is an optional dependency, and no built declaration names it', async () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
    expect(manifest.dependencies['better-sqlite3']).toBeUndefined();
    expect(manifest.optionalDependencies['better-sqlite3']).toBeDefined();
    const declarations = readdirSync(join(packageDir, 'dist')).filter((name) => name.endsWith('.d.ts'));
    expect(declarations.length).toBeGreaterThan(0);
    for (const name of declarations) {
      const text = readFileSync(join(packageDir, 'dist', name), 'utf8');
      expect(text, name).not.toMatch(/from ['"]better-sqlite3['"]|import\(['"]better-sqlite3['"]\)/);
    }
  });
});
