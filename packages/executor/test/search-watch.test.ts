/**
 * A warm search index watches its directories (src/search/dir-watch.ts): from a root's third
 * search on, a quiet directory is neither listed nor statted, nor are its files. Every kind of
 * change must still show in the very next search, the same as a fresh index would find.
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFile,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Executor } from '../src/executor.js';
import { type SearchScope, searchItems } from '../src/search/index.js';
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
    const search = (scope: SearchScope, query: string) => searchItems(executor, { scope, query, limit: 100 });
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
    // The index reads durations from process.hrtime (lillux monotonicMs).
    vi.useFakeTimers({ toFake: ['hrtime'] });
    try {
      for (let i = 0; i < 3; i++) await searchItems(executor, { scope: 'tool', query: 'papa' });
      expect(index.lastRefresh).toEqual({ statted: 3, listed: 0 });
      vi.advanceTimersByTime(2_500);
      await searchItems(executor, { scope: 'tool', query: 'papa' });
      expect(index.lastRefresh.statted).toBeGreaterThan(5);
      await searchItems(executor, { scope: 'tool', query: 'papa' });
      expect(index.lastRefresh).toEqual({ statted: 3, listed: 0 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a watched search index, against a fresh one after harder changes', () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  /** A warmed index over these tools, and a check that it finds what a fresh one finds. */
  async function warmed(files: Record<string, string>) {
    const ws = await createWorkspace();
    roots.push(ws.root);
    const tools = join(ws.project, '.ai', 'tools');
    const put = (rel: string, description: string) => {
      mkdirSync(join(tools, rel, '..'), { recursive: true });
      writeFileSync(
        join(tools, rel),
        signText(tool(rel.split('/')[0]!, description), join(tools, rel), ws.userKey),
      );
    };
    for (const [rel, description] of Object.entries(files)) put(rel, description);
    const executor = await ws.executor();
    const search = (query: string) => searchItems(executor, { scope: 'tool', query, limit: 100 });
    for (let i = 0; i < 3; i++) await search('alpha');
    const find = async (query: string) => {
      const warm = await search(query);
      expect(warm).toEqual(await searchItems(await ws.executor(), { scope: 'tool', query, limit: 100 }));
      return ids(warm);
    };
    return { ws, tools, put, search, find, index: searchIndexOf(executor) };
  }

  it('sees a directory removed while something holds it open, made again and filled', async () => {
    // The removed directory's own notice waits until it is closed; its parent's does not.
    const s = await warmed({ 'a/x.py': 'alpha x' });
    mkdirSync(join(s.tools, 'a/sub'));
    for (let i = 0; i < 3; i++) await s.search('alpha');
    const held = openSync(join(s.tools, 'a/sub'), 'r');
    try {
      rmdirSync(join(s.tools, 'a/sub'));
      s.put('a/sub/new.py', 'quebec new');
      expect(await s.find('quebec')).toEqual(['a/sub/new']);
    } finally {
      closeSync(held);
    }
  });

  it('does not carry entries over to a directory moved in the place of another', async () => {
    // Same names, same sizes, written in the same clock tick: only the directory tells them apart.
    const s = await warmed({});
    const texts = ['x', 'y'].map((dir, i) => {
      mkdirSync(join(s.tools, dir), { recursive: true });
      return signText(tool(dir, `alpha ${4 + i}`), join(s.tools, dir, 'b.py'), s.ws.userKey);
    });
    const stamp = (dir: string) => {
      const info = statSync(join(s.tools, dir, 'b.py'));
      return `${info.size} ${info.mtimeMs} ${info.ctimeMs}`;
    };
    // Two new files get the same coarse timestamp when written in one tick of the file system's
    // clock. Each try makes new files: a kernel with multigrain timestamps gives a file whose
    // times were read (by stat, below) a fine-grained time on its next change, never equal.
    for (let tries = 0; tries < 5000; tries++) {
      for (const dir of ['x', 'y']) rmSync(join(s.tools, dir, 'b.py'), { force: true });
      writeFileSync(join(s.tools, 'x/b.py'), texts[0]!);
      writeFileSync(join(s.tools, 'y/b.py'), texts[1]!);
      if (stamp('x') === stamp('y')) break;
    }
    expect(stamp('x')).toEqual(stamp('y'));
    await new Promise((resolve) => setTimeout(resolve, 60)); // past the racy window
    for (let i = 0; i < 3; i++) await s.search('alpha');
    renameSync(join(s.tools, 'x'), join(s.ws.root, 'swap'));
    renameSync(join(s.tools, 'y'), join(s.tools, 'x'));
    renameSync(join(s.ws.root, 'swap'), join(s.tools, 'y'));
    const found = await s.search('alpha');
    expect(found.results.map((r) => `${r.id} ${r.description}`).sort()).toEqual([
      'x/b alpha 5',
      'y/b alpha 4',
    ]);
    await s.find('alpha');
  });

  it('follows a symlinked item to wherever it leads now, and never out of its type directory', async () => {
    const s = await warmed({ 'a/x.py': 'alpha x', '_shared/t.py': 'alpha shared' });
    // Dangling when its directory is read; its target appears later.
    symlinkSync('../b/t.py', join(s.tools, 'a/later.py'));
    await s.search('alpha');
    s.put('b/t.py', 'romeo target');
    expect(await s.find('romeo')).toEqual(['a/later', 'b/t']);
    // Its target's folder becomes a file: no item, and no error.
    rmSync(join(s.tools, 'b'), { recursive: true });
    writeFileSync(join(s.tools, 'b'), 'not a folder');
    expect(await s.find('romeo')).toEqual([]);
    // Led out of the type directory through a folder link that is re-pointed.
    symlinkSync('_shared', join(s.tools, 'via'));
    symlinkSync('../via/t.py', join(s.tools, 'a/shared.py'));
    expect(await s.find('shared')).toEqual(['a/shared']); // _shared is not walked; the link is
    const outside = join(s.ws.root, 'outside');
    mkdirSync(outside);
    writeFileSync(
      join(outside, 't.py'),
      signText(tool('a', 'sierra outside'), join(outside, 't.py'), s.ws.userKey),
    );
    unlinkSync(join(s.tools, 'via'));
    symlinkSync(outside, join(s.tools, 'via'));
    expect(await s.find('sierra')).toEqual([]);
  });

  it('re-stats, without listing again, a directory whose only change is to a file that is no item', async () => {
    const s = await warmed({ 'a/x.py': 'alpha x' });
    writeFileSync(join(s.tools, 'a/log.txt'), '');
    await new Promise((resolve) => setTimeout(resolve, 60)); // past the racy window of its listing
    await s.search('alpha');
    await s.search('alpha');
    appendFileSync(join(s.tools, 'a/log.txt'), 'more');
    await s.search('alpha');
    expect(s.index.lastRefresh.listed).toBe(0);
    expect(await s.find('alpha')).toEqual(['a/x']);
  });
});

describe('RYE_SEARCH_WATCH=0', () => {
  it('keeps statting every file on every search', async () => {
    const ws = await createWorkspace();
    try {
      for (let i = 0; i < 5; i++) await ws.write('project', `tools/n/t${i}.py`, tool('n', 'lima'));
      const executor = await ws.executor({ PATH: process.env.PATH, RYE_SEARCH_WATCH: '0' });
      for (let i = 0; i < 3; i++) await searchItems(executor, { scope: 'tool', query: 'lima' });
      expect(searchIndexOf(executor).lastRefresh.statted).toBeGreaterThan(5);
    } finally {
      rmSync(ws.root, { recursive: true, force: true });
    }
  });
});
