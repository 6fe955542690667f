/**
 * Long searches stat their files on two threads (src/search/stat-pool.ts): the stats, and so the
 * results, are exactly those of statting them one by one, and every edit is still seen.
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../src/executor.js';
import type { SearchRequest } from '../src/search/index.js';
import { searchItems } from '../src/search/index.js';
import { setParallelStatThreshold, statFiles } from '../src/search/stat-pool.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace } from './helpers/workspace.js';

function expected(path: string): number[] {
  const info = statSync(path, { throwIfNoEntry: false });
  return info ? [info.isFile() ? info.nlink : 0, info.size, info.mtimeMs, info.ctimeMs] : [0, 0, 0, 0];
}

describe('stats on two threads', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rye-stat-pool-'));
    setParallelStatThreshold(1);
  });
  afterAll(() => {
    setParallelStatThreshold(1_500);
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives what statSync gives, file by file, request after request', async () => {
    const paths: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      const path = join(dir, `f${i % 7}`, `file-${i}.txt`);
      mkdirSync(join(dir, `f${i % 7}`), { recursive: true });
      writeFileSync(path, 'x'.repeat(i % 50));
      paths.push(path);
    }
    symlinkSync(paths[0]!, join(dir, 'link'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    paths.push(join(dir, 'f1'), join(dir, 'missing'), join(dir, 'link'), join(dir, 'dangling'));
    const targets = paths.map((path) => ({ path }));
    statFiles(targets); // starts the helper thread; give it time to be there for the rounds
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let round = 0; round < 4; round++) {
      // Files change between requests, and the request is a different set each time.
      appendFileSync(paths[round]!, 'more');
      const some = round % 2 ? targets.filter((_, i) => i % 3 !== round) : targets;
      const stats = statFiles(some);
      const actual = some.map((_, j) => Array.from(stats.subarray(4 * j, 4 * j + 4)));
      expect(actual).toEqual(some.map((target) => expected(target.path)));
    }
    expect(lstatSync(join(dir, 'link')).isSymbolicLink()).toBe(true);
  });

  it('lets a process end while the helper waits', () => {
    const script = `
      import { mkdirSync, writeFileSync } from 'node:fs';
      import { join } from 'node:path';
      const { Executor, searchItems } = await import(${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'index.js'))});
      const root = ${JSON.stringify(dir)};
      for (let i = 0; i < 1600; i++) {
        mkdirSync(join(root, 'p', '.ai', 'tools', 'n' + (i % 9)), { recursive: true });
        writeFileSync(join(root, 'p', '.ai', 'tools', 'n' + (i % 9), 't' + i + '.sh'), '# t\\n');
      }
      const executor = await Executor.create({ projectPath: join(root, 'p'), userSpace: join(root, 'u') });
      for (let i = 0; i < 3; i++) await searchItems(executor, { scope: 'tool', query: 't1' });
      console.log('done');`;
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('done');
    expect(run.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('a search on two threads', () => {
  let ws: Workspace;
  let executor: Executor;
  const search = (request: SearchRequest) => searchItems(executor, { limit: 100, ...request });
  const tool = (n: number, word: string) =>
    `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "p"\n__tool_description__ = "${word} number ${n}"\n`;

  beforeAll(async () => {
    ws = await createWorkspace();
    for (let i = 0; i < 60; i++)
      await ws.write(i % 2 ? 'project' : 'user', `tools/p/t${i}.py`, tool(i, 'alpha'));
    executor = await ws.executor();
  });
  afterAll(async () => {
    setParallelStatThreshold(1_500);
    await rm(ws.root);
  });

  it('finds what one thread finds, and sees in-place edits, new and deleted files', async () => {
    setParallelStatThreshold(Number.POSITIVE_INFINITY);
    const alone = await search({ scope: 'tool.p', query: 'alpha' });
    setParallelStatThreshold(1);
    expect(await search({ scope: 'tool.p', query: 'alpha' })).toEqual(alone);
    expect(alone.total).toBe(60);
    // An edit in place (same file, new bytes), a new file and a deleted one.
    await ws.write('project', 'tools/p/t1.py', tool(1, 'omega'));
    await ws.write('user', 'tools/p/t100.py', tool(100, 'omega'));
    rmSync(join(ws.user, '.ai', 'tools', 'p', 't2.py'));
    const after = await search({ scope: 'tool.p', query: 'omega' });
    expect(after.results.map((r) => r.id).sort()).toEqual(['p/t1', 'p/t100']);
    expect((await search({ scope: 'tool.p', query: 'alpha' })).total).toBe(58);
  });
});

async function rm(path: string): Promise<void> {
  rmSync(path, { recursive: true, force: true });
}
