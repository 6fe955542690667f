/**
 * `error_type` is a closed union of the `RyeError` codes (issue 10, item 1; DECISIONS 17). Each
 * error path the suites reach is walked here for real and its envelope checked against the
 * union; the suites' own expectations are checked to name only members of it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_TYPES, isErrorType } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/index.js';
import { createOperations, createRye } from '../../src/index.js';
import { tempProject } from '../helpers.js';

const packages = join(import.meta.dirname, '..', '..', '..');

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (entry === 'node_modules' || entry === 'fixtures') continue;
    if (statSync(path).isDirectory()) yield* testFiles(path);
    else if (entry.endsWith('.test.ts')) yield path;
  }
}

function errorTypeOf(envelope: Envelope): string {
  expect(envelope.status).toBe('error');
  const type = (envelope as { error_type?: unknown }).error_type;
  expect(isErrorType(type), `error_type ${String(type)} is not one of ${ERROR_TYPES.join(', ')}`).toBe(true);
  return String(type);
}

describe('error_type is a closed union', () => {
  it('names every code once, lower-case, with the tool failure code among them', () => {
    expect(new Set(ERROR_TYPES).size).toBe(ERROR_TYPES.length);
    for (const type of ERROR_TYPES) expect(type).toMatch(/^[a-z_]+$/);
    expect(ERROR_TYPES).toContain('execution');
    expect(isErrorType('exploded')).toBe(false);
  });

  it('every error path walked here answers with a member of the union', async () => {
    const t = await tempProject();
    const env = { USER_SPACE: t.user, PATH: process.env.PATH ?? '' };
    const rye = createRye({ projectPath: t.project, env });
    await (await rye.generateKeys()).fingerprint;
    const walked: Record<string, string> = {};
    const walk = async (path: string, result: Promise<Envelope>) => {
      walked[path] = errorTypeOf(await result);
    };

    await walk('missing item', rye.execute({ item_id: 'tool:nope/x' }));
    await walk('empty item_id', rye.execute({ item_id: '' }));
    await walk('mistyped argument', rye.execute({ item_id: 'tool:x', trace: 'yes' as never }));
    await t.write('tools/acme/unsigned.sh', '# __version__ = "1.0.0"\necho hi\n');
    await walk('unsigned tool', rye.execute({ item_id: 'tool:acme/unsigned' }));
    await walk('fork of a missing directive', rye.execute({ item_id: 'directive:x', thread: 'fork' }));
    await walk('sign in system space', rye.sign('tool:rye/bash', { space: 'system' }));
    await walk('sign with nothing matching', rye.sign('tool:nope/*'));
    await walk('load from nowhere', rye.load({ item_id: 'knowledge:nope' }));
    // @ts-expect-error a scope of no known kind does not type-check, and is refused at run time too
    await walk('search of an unknown kind', rye.search({ scope: 'widget', query: '' }));
    await walk(
      'tool that fails',
      rye.execute({ item_id: 'tool:rye/bash', parameters: { command: 'echo broken >&2; exit 3' } }),
    );
    await walk(
      'tool that times out',
      rye.execute({ item_id: 'tool:rye/bash', parameters: { command: 'sleep 5', timeout: 1 } }),
    );
    await mkdir(join(t.user, '.ai', 'config'), { recursive: true });
    await writeFile(join(t.user, '.ai', 'config', 'bundles.yaml'), 'bundles: [unclosed\n');
    await walk(
      'broken bundles.yaml',
      createRye({ projectPath: t.project, env }).execute({ item_id: 'tool:x' }),
    );
    const ops = createOperations({ env });
    await walk(
      'MCP call without a project',
      ops.execute({ item_id: 'tool:x' }, { signal: new AbortController().signal }),
    );

    expect(walked).toEqual({
      'missing item': 'not_found',
      'empty item_id': 'validation',
      'mistyped argument': 'validation',
      'unsigned tool': 'integrity',
      'fork of a missing directive': 'not_found',
      'sign in system space': 'permission',
      'sign with nothing matching': 'not_found',
      'load from nowhere': 'not_found',
      'search of an unknown kind': 'validation',
      'tool that fails': 'execution',
      'tool that times out': 'timeout',
      'broken bundles.yaml': 'config',
      'MCP call without a project': 'validation',
    });
  }, 30_000);

  it("the suites' expectations name only members of the union", () => {
    const named = new Map<string, string>();
    for (const pkg of readdirSync(packages)) {
      const dir = join(packages, pkg, 'test');
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      for (const file of testFiles(dir)) {
        const text = readFileSync(file, 'utf8');
        for (const [, type] of text.matchAll(/error_type(?:: |\)\.toBe\()'([a-z_]+)'/g))
          named.set(type!, file);
      }
    }
    expect(named.size).toBeGreaterThan(5);
    const outside = [...named].filter(([type]) => !isErrorType(type));
    expect(outside).toEqual([]);
  });
});
