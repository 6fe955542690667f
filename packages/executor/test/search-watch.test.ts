/**
 * A warm search index watches its directories (src/search/dir-watch.ts): from a root's third
 * search on, a quiet directory is neither listed nor statted, nor are its files. Every kind of
 * change must still show in the very next search, the same as a fresh index would find.
 */
import { spawnSync } from 'node:child_process';
import {
  linkSync,
  mkdirSync,
  readFile,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Executor } from '../src/executor.js';
import { searchItems } from '../src/search/index.js';
import { searchIndexOf } from '../src/search/index-cache.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace, signText } from './helpers/workspace.js';

const tool = (category: string, description: string) =>
  `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "${category}"\n__tool_description__ = "${description}"\n`;

const ids = (response: { results: { id: string }[] }) => response.results.map((r) => r.id).sort();

describe('a watched search index', () => {
  let ws: Workspace;
  let executor: Executor;
  let tools: string;
  /** Signed tool text for a project path (relative to the tools directory). */
  const signed = (rel: string, description: string) =>
    signText(tool(rel.split('/')[0]!, description), join(tools, rel), ws.userKey);
  const put = (rel: string, description: string) => {
    mkdirSync(join(tools, rel, '..'), { recursive: true });
    writeFileSync(join(tools, rel), signed(rel, description));
  };
  const search = (query: string) => searchItems(executor, { scope: 'tool', query, limit: 100 });

  /** The search, checked against a fresh executor's (which stats everything). */
  async function find(query: string): Promise<string[]> {
    const warm = await search(query);
    const cold = await searchItems(await ws.executor(), { scope: 'tool', query, limit: 100 });
    expect(warm).toEqual(cold);
    return ids(warm);
  }

  beforeAll(async () => {
    ws = await createWorkspace();
    tools = join(ws.project, '.ai', 'tools');
    for (let i = 0; i < 30; i++) put(`ns${i % 3}/t${i}.py`, `alpha item ${i}`);
    executor = await ws.executor();
    for (let i = 0; i < 3; i++) await search('alpha');
  });
  afterAll(() => rmSync(ws.root, { recursive: true, force: true }));
  afterEach(async () => {
    // Once the last change has been seen, the index is quiet again: no directory is listed and
    // only the three type roots (project, user, system) are statted.
    await search('alpha');
    await search('alpha');
    expect(searchIndexOf(executor).lastRefresh).toEqual({ statted: 3, listed: 0 });
  });

  it('stats only the type roots while nothing changes', async () => {
    expect((await search('alpha')).total).toBe(30);
    expect(searchIndexOf(executor).lastRefresh).toEqual({ statted: 3, listed: 0 });
  });

  it('sees a file rewritten in place, synchronously, right before the search', async () => {
    writeFileSync(join(tools, 'ns0/t0.py'), signed('ns0/t0.py', 'bravo item 0'));
    expect(await find('bravo')).toEqual(['ns0/t0']);
    expect(await find('alpha')).not.toContain('ns0/t0');
  });

  it('sees a change made from an I/O callback, in the same poll phase as the search', async () => {
    // The callback runs after libuv has read the kernel's notices for this loop turn: this
    // notice arrives in the next one, which the search must wait for.
    const found = await new Promise<string[]>((resolve, reject) => {
      readFile(join(tools, 'ns0/t6.py'), () => {
        writeFileSync(join(tools, 'ns0/t6.py'), signed('ns0/t6.py', 'mike from a callback'));
        search('mike').then((response) => resolve(ids(response)), reject);
      });
    });
    expect(found).toEqual(['ns0/t6']);
  });

  it('sees files added, removed and renamed', async () => {
    await writeFile(join(tools, 'ns1/new.py'), signed('ns1/new.py', 'charlie new'));
    expect(await find('charlie')).toEqual(['ns1/new']);
    unlinkSync(join(tools, 'ns1/new.py'));
    expect(await find('charlie')).toEqual([]);
    renameSync(join(tools, 'ns1/t1.py'), join(tools, 'ns1/moved.py'));
    const found = await find('alpha');
    expect(found).toContain('ns1/moved');
    expect(found).not.toContain('ns1/t1');
  });

  it('sees directories created, removed and replaced', async () => {
    put('fresh/deep/one.py', 'delta one');
    expect(await find('delta')).toEqual(['fresh/deep/one']);
    rmSync(join(tools, 'fresh'), { recursive: true });
    expect(await find('delta')).toEqual([]);
    rmSync(join(tools, 'ns2'), { recursive: true });
    put('ns2/other.py', 'echo other');
    expect(await find('echo')).toEqual(['ns2/other']);
    expect((await find('alpha')).filter((id) => id.startsWith('ns2/'))).toEqual([]);
  });

  it('sees a change made by another process', async () => {
    const path = join(tools, 'ns0/t3.py');
    const text = signed('ns0/t3.py', 'foxtrot by another process');
    const run = spawnSync(process.execPath, [
      '-e',
      `require('node:fs').writeFileSync(${JSON.stringify(path)}, ${JSON.stringify(text)})`,
    ]);
    expect(run.status).toBe(0);
    expect(await find('foxtrot')).toEqual(['ns0/t3']);
  });

  it('sees a type root whose ancestor was moved away and replaced', async () => {
    const ai = join(ws.project, '.ai');
    const before = await find('alpha');
    renameSync(ai, join(ws.project, '.ai-old'));
    put('ns0/golf.py', 'golf in a new tree');
    try {
      expect(await find('golf')).toEqual(['ns0/golf']);
      expect(await find('alpha')).toEqual([]);
    } finally {
      rmSync(ai, { recursive: true });
      renameSync(join(ws.project, '.ai-old'), ai);
    }
    expect(await find('alpha')).toEqual(before);
  });

  it('sees a symlinked file changed through its target', async () => {
    put('_shared/real.py', 'hotel linked');
    symlinkSync(join('..', '_shared', 'real.py'), join(tools, 'ns1/linked.py'));
    expect(await find('hotel')).toEqual(['ns1/linked']);
    await search('hotel'); // the link's directory is quiet again
    writeFileSync(join(tools, '_shared/real.py'), signed('ns1/linked.py', 'india linked'));
    expect(await find('india')).toEqual(['ns1/linked']);
    unlinkSync(join(tools, 'ns1/linked.py'));
  });

  it('sees a hard-linked file changed through its other name', async () => {
    const outside = join(ws.root, 'outside.py');
    put('ns2/hard.py', 'juliet hard');
    linkSync(join(tools, 'ns2/hard.py'), outside);
    expect(await find('juliet')).toEqual(['ns2/hard']);
    await search('juliet');
    writeFileSync(outside, signed('ns2/hard.py', 'kilo hard'));
    expect(await find('kilo')).toEqual(['ns2/hard']);
    unlinkSync(join(tools, 'ns2/hard.py'));
  });
});

describe('a watched search index, walked in parts and over time', () => {
  const roots: string[] = [];
  const workspace = async () => {
    const ws = await createWorkspace();
    roots.push(ws.root);
    return ws;
  };
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('stats the files a namespaced search skipped before it trusts their directory', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/top.py', tool('', 'november top'));
    await ws.write('project', 'tools/ns/inner.py', tool('ns', 'november inner'));
    const executor = await ws.executor();
    const search = (scope: string, query: string) => searchItems(executor, { scope, query, limit: 100 });
    expect(ids(await search('tool', 'november'))).toEqual(['ns/inner', 'top']);
    // Changed before the type root is first watched, by a search that does not look at it.
    await ws.write('project', 'tools/top.py', tool('', 'oscar top'));
    expect(ids(await search('tool.ns', 'november'))).toEqual(['ns/inner']);
    expect(ids(await search('tool', 'oscar'))).toEqual(['top']);
  });

  it('stats a watched directory again after a while, in case the kernel dropped a notice', async () => {
    const ws = await workspace();
    for (let i = 0; i < 5; i++) await ws.write('project', `tools/n/t${i}.py`, tool('n', 'papa'));
    const executor = await ws.executor();
    const index = searchIndexOf(executor);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      for (let i = 0; i < 3; i++) await searchItems(executor, { scope: 'tool', query: 'papa' });
      expect(index.lastRefresh).toEqual({ statted: 3, listed: 0 });
      vi.setSystemTime(Date.now() + 2_500);
      await searchItems(executor, { scope: 'tool', query: 'papa' });
      expect(index.lastRefresh.statted).toBeGreaterThan(5);
      await searchItems(executor, { scope: 'tool', query: 'papa' });
      expect(index.lastRefresh).toEqual({ statted: 3, listed: 0 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('RYE_SEARCH_WATCH=0', () => {
  it('keeps statting every file on every search', async () => {
    const ws = await createWorkspace();
    process.env.RYE_SEARCH_WATCH = '0';
    try {
      for (let i = 0; i < 5; i++) await ws.write('project', `tools/n/t${i}.py`, tool('n', 'lima'));
      const executor = await ws.executor();
      for (let i = 0; i < 3; i++) await searchItems(executor, { scope: 'tool', query: 'lima' });
      expect(searchIndexOf(executor).lastRefresh.statted).toBeGreaterThan(5);
    } finally {
      delete process.env.RYE_SEARCH_WATCH;
      rmSync(ws.root, { recursive: true, force: true });
    }
  });
});
