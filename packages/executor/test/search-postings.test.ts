/**
 * A warm search answers from postings (src/search/postings.ts) and, while every watch is quiet,
 * from the entries its last full walk found (index-cache.ts). Both must give what a fresh index
 * gives: the postings never leave out an entry a query matches, and any change seen by a notice
 * (or a trust store change, or no watches at all) sends the next search back to the files.
 */
import {
  appendFileSync,
  mkdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Executor } from '../src/executor.js';
import { setWatchCap } from '../src/search/dir-watch.js';
import type { IndexEntry } from '../src/search/entry.js';
import type { SearchRequest } from '../src/search/index.js';
import { searchItems } from '../src/search/index.js';
import { searchIndexOf } from '../src/search/index-cache.js';
import { makeDoc } from '../src/search/match.js';
import { Postings } from '../src/search/postings.js';
import { evaluate, parseQuery } from '../src/search/query.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace, signText } from './helpers/workspace.js';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('postings', () => {
  // Few letters, so words share runs; punctuation, digits, underscores and letters whose lower
  // case is longer (İ) or outside the BMP (𝒜), so word splitting is put to the test.
  const PIECES = ['ab', 'ba', 'abc', 'ca', 'b', 'é', 'İx', '𝒜b', '_', '1', '-', '/', '.', ' ', ' ', ' '];
  const next = random(11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const text = (length: number) => Array.from({ length }, () => pick(PIECES)).join('');
  const entry = (body: string) => ({ id: 'ns/item', doc: makeDoc(body) }) as unknown as IndexEntry;

  /** Query text: slices of document text as terms, phrases and wildcards, combined. */
  function query(bodies: string[]): string {
    const slice = () => {
      const body = pick(bodies).toLowerCase();
      const start = Math.floor(next() * body.length);
      return body.slice(start, start + 1 + Math.floor(next() * 5));
    };
    const leaf = () => {
      const roll = next();
      const cut = slice().replace(/[\s()"]/g, '');
      if (roll < 0.2) return `"${slice().replace(/"/g, '')}"`;
      if (roll < 0.35) return `${cut}*`;
      if (roll < 0.45) return `*${cut}`;
      if (roll < 0.5) return `*${cut}*`;
      return cut || 'ab';
    };
    const shapes = [
      () => leaf(),
      () => `${leaf()} ${leaf()}`,
      () => `${leaf()} OR ${leaf()}`,
      () => `${leaf()} NOT ${leaf()}`,
      () => `(${leaf()} OR ${leaf()}) AND ${leaf()}`,
      () => `NOT ${leaf()}`,
    ];
    return pick(shapes)();
  }

  it('hold every entry a query matches (and only those, when exact), through additions and removals', () => {
    const postings = new Postings();
    let live = Array.from({ length: 200 }, () => entry(text(12)));
    for (let round = 0; round < 6; round++) {
      postings.sync(live);
      const alive = new Set(live);
      expect(postings.size).toBe(live.length);
      const bodies = live.map((e) => e.doc.lower);
      for (let i = 0; i < 60; i++) {
        const q = query(bodies);
        const ast = parseQuery(q);
        for (const fuzzy of [0, 1, 2]) {
          const found = postings.candidates(ast, fuzzy);
          const set = new Set(found ?? live);
          for (const e of set) if (!alive.has(e)) throw new Error('a removed entry is a candidate');
          // Exact candidates are matches, every one.
          if (Postings.exact(ast)) {
            for (const e of set) {
              if (!evaluate(ast, e.doc, fuzzy))
                throw new Error(
                  `query ${JSON.stringify(q)} (fuzzy ${fuzzy}) is not exact for ${JSON.stringify(e.doc.lower)}`,
                );
            }
          }
          for (const e of live) {
            if (evaluate(ast, e.doc, fuzzy) && !set.has(e)) {
              throw new Error(
                `query ${JSON.stringify(q)} (fuzzy ${fuzzy}) misses ${JSON.stringify(e.doc.lower)}`,
              );
            }
          }
        }
      }
      // Drop a third, keep the rest, add new ones (past the rebuild threshold on later rounds).
      live = [
        ...live.filter(() => next() > 0.33),
        ...Array.from({ length: round === 3 ? 1500 : 50 }, () => entry(text(10))),
      ];
    }
  });

  it('narrow a selective query to the entries that hold its words', () => {
    const postings = new Postings();
    const entries = Array.from({ length: 500 }, (_, i) => entry(`item ${i} common words here`));
    entries.push(entry('the rare zebra'));
    postings.sync(entries);
    expect(postings.candidates(parseQuery('zebra'), 0)).toEqual([entries[500]]);
    expect(postings.candidates(parseQuery('ebr'), 0)).toEqual([entries[500]]);
    expect(postings.candidates(parseQuery('zeb*'), 0)).toEqual([entries[500]]);
    expect(postings.candidates(parseQuery('zebrx'), 1)).toEqual([entries[500]]);
    expect(postings.candidates(parseQuery('"rare zebra"'), 0)).toEqual([entries[500]]);
    expect(postings.candidates(parseQuery('NOT common'), 0)).toBeUndefined();
  });
});

const tool = (category: string, description: string) =>
  `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "${category}"\n__tool_description__ = "${description}"\n`;

/** Queries of every shape, checked against a fresh index after each change. */
const REQUESTS: Omit<SearchRequest, 'limit'>[] = [
  { scope: 'tool', query: 'alpha' },
  { scope: 'tool', query: 'lph' },
  { scope: 'tool', query: 'alpha bravo' },
  { scope: 'tool', query: 'alpha OR charlie' },
  { scope: 'tool', query: 'alpha NOT bravo' },
  { scope: 'tool', query: '"alpha bravo"' },
  { scope: 'tool', query: 'char*' },
  { scope: 'tool', query: '*ta' },
  { scope: 'tool', query: 'alpho', fuzzy: { enabled: true, max_distance: 1 } },
  { scope: 'tool', query: 'alpha item', proximity: { enabled: true, max_distance: 3 } },
  { scope: 'tool.ns1', query: 'alpha' },
  { scope: 'tool', query: 'ns2/t' },
  { scope: 'tool', query: '' },
  { scope: 'tool', query: '', sort_by: 'name', offset: 3 },
  { scope: 'tool', query: 'item', fields: { description: 'delta' } },
  { scope: 'tool', query: 'NOT alpha' },
];

describe('a warm search index, against a fresh one', () => {
  let ws: Workspace;
  let executor: Executor;
  let tools: string;
  const put = (rel: string, description: string) => {
    mkdirSync(join(tools, rel, '..'), { recursive: true });
    writeFileSync(
      join(tools, rel),
      signText(tool(rel.split('/')[0]!, description), join(tools, rel), ws.userKey),
    );
  };
  const request = (r: Omit<SearchRequest, 'limit'>) => ({ limit: 5, ...r });
  const scan = () => searchIndexOf(executor).lastScan;

  /** Every request gives, warm, what a fresh index gives; returns how much the warm ones walked. */
  async function same(): Promise<number> {
    const fresh = await ws.executor();
    let walked = 0;
    for (const r of REQUESTS) {
      const warm = await searchItems(executor, request(r));
      walked += scan().walked;
      expect(warm, JSON.stringify(r)).toEqual(await searchItems(fresh, request(r)));
    }
    return walked;
  }

  beforeAll(async () => {
    // A slow run must not reach the 2 s re-stat of watched folders between two checks.
    vi.useFakeTimers({ toFake: ['hrtime'] });
    ws = await createWorkspace();
    tools = join(ws.project, '.ai', 'tools');
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'beta'];
    for (let i = 0; i < 60; i++)
      put(`ns${i % 4}/t${i}.py`, `${words[i % 6]} ${words[(i * 7) % 6]} item ${i}`);
    executor = await ws.executor();
    for (let i = 0; i < 3; i++) await searchItems(executor, request({ scope: 'tool', query: 'alpha' }));
  });
  afterAll(() => {
    vi.useRealTimers();
    rmSync(ws.root, { recursive: true, force: true });
  });

  it('answers a quiet index without walking it, testing only what the query can match', async () => {
    await searchItems(executor, request({ scope: 'tool', query: 'alpha' }));
    const all = await searchItems(executor, { scope: 'tool', include_internal: true, limit: 0 });
    expect(scan().walked).toBe(0);
    const one = await searchItems(executor, request({ scope: 'tool', query: 't17' }));
    expect(one.results.map((r) => r.id)).toEqual(['ns1/t17']);
    expect(scan()).toEqual({ walked: 0, candidates: 1 });
    expect(all.total).toBeGreaterThan(60);
  });

  it('gives what a fresh index gives through edits, additions, removals and renames', async () => {
    expect(await same()).toBe(0);
    const steps: [string, () => void][] = [
      ['rewrite in place', () => put('ns0/t0.py', 'charlie rewritten item 0')],
      [
        'same size, same tick',
        () => {
          put('ns1/t1.py', 'alpha alpha item 1');
          put('ns1/t1.py', 'bravo bravo item 1');
        },
      ],
      ['add', () => put('ns2/new.py', 'alpha charlie new item')],
      ['add a folder', () => put('fresh/deep/x.py', 'delta alpha deep item')],
      ['delete', () => unlinkSync(join(tools, 'ns3/t3.py'))],
      ['rename a file', () => renameSync(join(tools, 'ns0/t4.py'), join(tools, 'ns0/renamed.py'))],
      ['rename a folder', () => renameSync(join(tools, 'ns2'), join(tools, 'ns5'))],
      ['remove a folder', () => rmSync(join(tools, 'fresh'), { recursive: true })],
      [
        'a folder moved in',
        () => {
          mkdirSync(join(ws.root, 'outside'));
          writeFileSync(
            join(ws.root, 'outside', 'o.py'),
            signText(tool('moved', 'alpha moved in'), join(tools, 'moved', 'o.py'), ws.userKey),
          );
          renameSync(join(ws.root, 'outside'), join(tools, 'moved'));
        },
      ],
    ];
    for (const [step, change] of steps) {
      change();
      await same();
      // Quiet again: answered from the settled entries.
      expect(await same(), step).toBe(0);
    }
  });

  it('never reports an item as signed once its bytes changed', async () => {
    const query = request({ scope: 'tool', query: 't9' });
    expect((await searchItems(executor, query)).results[0]).toMatchObject({ id: 'ns1/t9', signed: true });
    appendFileSync(join(tools, 'ns1/t9.py'), '# tampered\n');
    expect((await searchItems(executor, query)).results[0]).toMatchObject({ id: 'ns1/t9', signed: false });
    await same();
  });

  it('re-verifies every item when the trust store changes', async () => {
    const query = request({ scope: 'tool', query: 't13' });
    expect((await searchItems(executor, query)).results[0]?.signed).toBe(true);
    const trusted = join(ws.user, '.ai', 'config', 'keys', 'trusted');
    renameSync(trusted, `${trusted}.off`);
    try {
      expect((await searchItems(executor, query)).results[0]?.signed).toBe(false);
      await same();
    } finally {
      renameSync(`${trusted}.off`, trusted);
    }
    expect((await searchItems(executor, query)).results[0]?.signed).toBe(true);
  });

  it('walks every search while a folder is beyond the watch cap, or holds a symbolic link', async () => {
    const check = async (other: Executor) => {
      const fresh = await ws.executor();
      for (let i = 0; i < 3; i++) await searchItems(other, request({ scope: 'tool', query: 'alpha' }));
      put('ns1/t21.py', 'echo changed again item 21');
      for (const r of REQUESTS) {
        const result = await searchItems(other, request(r));
        expect(searchIndexOf(other).lastScan.walked).toBeGreaterThan(0);
        expect(result, JSON.stringify(r)).toEqual(await searchItems(fresh, request(r)));
      }
    };
    setWatchCap(2);
    try {
      await check(await ws.executor());
    } finally {
      setWatchCap(undefined);
    }
    symlinkSync('t25.py', join(tools, 'ns1', 'link.py'));
    try {
      await check(await ws.executor());
    } finally {
      unlinkSync(join(tools, 'ns1', 'link.py'));
    }
  });

  it('shows a change, and each copy its shadow, when the project is the user space', async () => {
    const options = {
      projectPath: ws.user,
      userSpace: ws.user,
      systemBundles: [{ id: 'test', root: ws.system }],
      env: { PATH: process.env.PATH },
    };
    const rel = join('tools', 'home', 'h.py');
    const path = await ws.write('user', rel, tool('home', 'tango home'));
    const shared = await Executor.create(options);
    const query = request({ scope: 'tool', query: 'home' });
    for (let i = 0; i < 3; i++) await searchItems(shared, query);
    writeFileSync(path, signText(tool('home', 'uniform home'), path, ws.userKey));
    const found = await searchItems(shared, query);
    expect(found.results.map((r) => r.description)).toEqual(['uniform home', 'uniform home']);
    // Each copy still knows of the other (one id in two spaces).
    for (const result of found.results) expect(result.shadows ?? result.shadowed_by).toBeDefined();
    rmSync(path);
  });

  it('walks every search without watches (RYE_SEARCH_WATCH=0), with the same results', async () => {
    const unwatched = await ws.executor({ PATH: process.env.PATH, RYE_SEARCH_WATCH: '0' });
    const fresh = await ws.executor();
    for (let i = 0; i < 3; i++) await searchItems(unwatched, request({ scope: 'tool', query: 'alpha' }));
    put('ns1/t5.py', 'echo unwatched change item 5');
    for (const r of REQUESTS) {
      const result = await searchItems(unwatched, request(r));
      expect(searchIndexOf(unwatched).lastScan.walked).toBeGreaterThan(0);
      expect(result, JSON.stringify(r)).toEqual(await searchItems(fresh, request(r)));
    }
  });
});
