// Importing the package loads no database client: a host that never opens a Postgres store (the
// SQLite default) pays nothing for it. Checked in a fresh process, on the built package.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const packageDir = join(import.meta.dirname, '..');

function loadedAfter(script: string): { before: boolean; after: boolean } {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: packageDir,
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').pop()!);
}

describe('lazy start', () => {
  it('loads pg when a store is opened, not when the package is imported', () => {
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const pgLoaded = () => Object.keys(require.cache).some((p) => /[\\\\/]node_modules[\\\\/]pg[\\\\/]lib[\\\\/]/.test(p));
      const api = await import('./dist/index.js');
      const before = pgLoaded();
      // Nothing listens on port 1: the open fails, after loading the client.
      await api.openPostgresThreadStore({ connectionString: 'postgres://x@127.0.0.1:1/x' }).catch(() => {});
      console.log(JSON.stringify({ before, after: pgLoaded() }));
    `;
    expect(loadedAfter(script)).toEqual({ before: false, after: true });
  });
});
