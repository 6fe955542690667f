import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = join(import.meta.dirname, '..', 'dist', 'index.js');
// Logs every bare package specifier the process resolves, then imports the built facade.
const hook = `import { isBuiltin } from 'node:module';
export async function resolve(s, c, next) {
  if (!/^[./]|^file:/.test(s) && !isBuiltin(s)) process.stderr.write('PKG ' + s + '\\n');
  return next(s, c);
}`;
const script = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
await import(${JSON.stringify(dist)});`;

describe('startup stays lazy', () => {
  it('importing ryeos loads none of the heavy parsers, schema or loader packages', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const loaded = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('PKG '))
      .map((l) => l.slice(4));
    expect(loaded).toContain('@ryeos/executor');
    for (const heavy of ['yaml', '@babel/parser', 'ajv', 'smol-toml', 'tsx', 'picomatch', 'better-sqlite3']) {
      expect(loaded, `${heavy} must load on first use only`).not.toContain(heavy);
    }
  });
});
