import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = join(import.meta.dirname, '..', '..', '..');
const script = join(repo, 'scripts', 'check-layers.mjs');
const fixtures = join(import.meta.dirname, 'fixtures', 'layers');

async function check(dir: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, [script, dir]);
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe('layering check', () => {
  it('passes on the real workspace', async () => {
    const result = await check(join(repo, 'packages'));
    expect(result.code).toBe(0);
  });

  it('passes on layers that only import downward', async () => {
    expect((await check(join(fixtures, 'clean'))).code).toBe(0);
  });

  it('fails on upward imports, dynamic imports, and a ryeos import other than lillux from @ryeos/mcp', async () => {
    const result = await check(join(fixtures, 'upward'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/lillux\/src\/index\.ts:2: @ryeos\/lillux imports @ryeos\/executor/);
    expect(result.stderr).toMatch(/executor\/src\/index\.ts:1: @ryeos\/executor imports @ryeos\/threads/);
    expect(result.stderr).toMatch(/mcp\/src\/index\.ts:1: @ryeos\/mcp imports @ryeos\/executor/);
    // The Postgres store implements the threads interface: directives and executor are not its to use.
    expect(result.stderr).toMatch(
      /store-postgres\/src\/index\.ts:1: @ryeos\/store-postgres imports @ryeos\/directives/,
    );
  });
});
