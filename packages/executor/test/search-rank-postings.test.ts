/**
 * A broad query's terms and wildcards are ranked from the postings (src/search/field-words.ts): each strength
 * read there must be the number the per-entry ranking (rank.ts) computes, for every entry, field
 * weighting and term, through additions and removals.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Executor } from '../src/executor.js';
import type { IndexEntry } from '../src/search/entry.js';
import type { SearchRequest } from '../src/search/index.js';
import { searchItems } from '../src/search/index.js';
import { makeDoc } from '../src/search/match.js';
import { Postings } from '../src/search/postings.js';
import { parseQuery } from '../src/search/query.js';
import { positiveLeaves, rankFields, rankScore, rankScoreWith } from '../src/search/rank.js';
import { inNamespace } from '../src/search/scope.js';
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

describe('ranking from the postings', () => {
  // Few letters, so words contain one another; separators the id and the fields split on
  // differently (`_` is a word character of fields but splits id words), and letters whose
  // lower case is longer (İ) or outside the BMP (𝒜).
  const PIECES = ['ab', 'ba', 'abc', 'ca', 'b', 'é', 'İx', '𝒜b', '1', '_', '-', '/', '.', ' ', ' '];
  const next = random(23);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const text = (length: number) => Array.from({ length }, () => pick(PIECES)).join('');

  function entry(kind: string): IndexEntry {
    // Ids and names sometimes a single word, so the whole-id and whole-name strengths occur.
    const id =
      next() < 0.2 ? pick(['ab', 'abc', 'ca/ab', 'ab/ab']) : text(6).replace(/^\/+|\/+$/g, '') || 'x';
    const name = next() < 0.3 ? (id.split('/').pop() ?? id) : text(3) || 'n';
    const description = text(8);
    const category = text(3);
    const tags = [text(2), text(2)];
    const preview = text(20);
    return {
      kind,
      id,
      ref: `${kind}:${id}`,
      name,
      nameLower: name.toLowerCase(),
      title: name,
      description,
      category,
      preview,
      metadata: { tags, title: name },
      doc: makeDoc([id, name, name, description, category, tags.join(' '), preview].join(' ')),
      fieldDocs: new Map(),
    } as unknown as IndexEntry;
  }

  const WEIGHTINGS: [string, number][][] = [
    [
      ['title', 3],
      ['name', 3],
      ['description', 2],
      ['category', 1.5],
      ['content', 1],
    ],
    [
      ['description', 2],
      ['tags', 1.5],
      ['category', 1],
    ],
    [
      ['name', 3],
      ['description', 3],
    ],
  ];

  it('gives every entry the strength the per-entry ranking gives', () => {
    for (const kind of ['tool', 'knowledge']) {
      for (const weights of WEIGHTINGS) {
        const rank = rankFields(weights, kind);
        const postings = new Postings();
        let live = Array.from({ length: 150 }, () => entry(kind));
        for (let round = 0; round < 4; round++) {
          postings.sync(live);
          const words = live.flatMap((e) => e.doc.lower.split(/[^\p{L}\p{M}\p{N}]+/u)).filter(Boolean);
          for (let q = 0; q < 40; q++) {
            // Whole words and pieces of them, one or two terms.
            const term = () => {
              const word = [...pick(words)];
              const start = Math.floor(next() * word.length);
              return (next() < 0.5 ? word : word.slice(start, start + 1 + Math.floor(next() * 3))).join('');
            };
            // Wildcards too, over pieces with `_` (fields split on it differently from names).
            const wildcard = () =>
              pick([`${term()}*`, `*${term()}`, `*${term()}*`, `${term()}_*`, `${term()}?*`]);
            const leaf = () => (next() < 0.7 ? term() : wildcard());
            const query = next() < 0.5 ? leaf() : `${leaf()} OR ${leaf()}`;
            const leaves = positiveLeaves(parseQuery(query));
            const lookups = leaves.map((leaf) => postings.strengths(leaf, rank, 0));
            if (!lookups.some(Boolean)) throw new Error(`no lookup for ${JSON.stringify(query)}`);
            const slots = postings.liveSlots();
            for (const slot of slots) {
              const e = postings.entryAt(slot);
              const want = rankScore(e, leaves, rank, 0);
              const got = rankScoreWith(e, slot, leaves, lookups, rank, 0);
              if (got !== want) {
                throw new Error(
                  `${kind} ${JSON.stringify(weights)} query ${JSON.stringify(query)}: ${got} ≠ ${want} for ${JSON.stringify({ id: e.id, name: e.name, doc: e.doc.lower })}`,
                );
              }
            }
          }
          // Drop some, add some (past the rebuild threshold once).
          live = [
            ...live.filter(() => next() > 0.3),
            ...Array.from({ length: round === 1 ? 1200 : 40 }, () => entry(kind)),
          ];
        }
      }
    }
  });

  it('leaves fuzzy terms, phrases and terms with punctuation to the per-entry ranking', () => {
    const postings = new Postings();
    postings.sync([entry('tool')]);
    const rank = rankFields(WEIGHTINGS[0]!, 'tool');
    const [term] = positiveLeaves(parseQuery('ab'));
    expect(postings.strengths(term!, rank, 1)).toBeUndefined();
    for (const query of ['"ab ba"', 'a_b', 'ab-ba']) {
      const [leaf] = positiveLeaves(parseQuery(query));
      expect(postings.strengths(leaf!, rank, 0)).toBeUndefined();
    }
  });
});

describe('a warm search of a broad query, against a fresh index', () => {
  let ws: Workspace;
  let executor: Executor;
  const WORDS = ['read', 'thread', 'file', 'profile', 'write', 'rewrite', 'list', 'web'];

  beforeAll(async () => {
    // A slow run must not reach the 2 s re-stat of watched folders between two checks.
    vi.useFakeTimers({ toFake: ['hrtime'] });
    ws = await createWorkspace();
    const tools = join(ws.project, '.ai', 'tools');
    const next = random(5);
    const pick = () => WORDS[Math.floor(next() * WORDS.length)]!;
    // 400 tools, so broad queries pass the count from which ranking reads the postings.
    for (let i = 0; i < 400; i++) {
      const category = `${pick()}/${pick()}`;
      const rel = `${category}/${pick()}_${pick()}_${i}.py`;
      const path = join(tools, rel);
      mkdirSync(join(path, '..'), { recursive: true });
      const text = `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "${category}"\n__tool_description__ = "${pick()} ${pick()} ${pick()}"\n`;
      writeFileSync(path, signText(text, path, ws.userKey));
    }
    executor = await ws.executor();
    for (let i = 0; i < 3; i++) await searchItems(executor, { scope: 'tool', query: 'read', limit: 1 });
  });
  afterAll(() => {
    vi.useRealTimers();
    rmSync(ws.root, { recursive: true, force: true });
  });

  it('gives the same items, order, scores, totals and pages', async () => {
    const strengths = vi.spyOn(Postings.prototype, 'strengths');
    const requests: SearchRequest[] = [];
    for (const query of ['read', 'file', 'rea', 'ile', 'read file', 'read OR web', 'thr*', '*ite', 'r*d']) {
      requests.push({ scope: 'tool', query, limit: 7 }, { scope: 'tool', query, limit: 5, offset: 40 });
    }
    requests.push({ scope: 'tool', query: 'read', limit: 0, include_internal: true });
    const fresh = await ws.executor();
    for (const request of requests) {
      const warm = await searchItems(executor, request);
      expect(warm, JSON.stringify(request)).toEqual(await searchItems(fresh, request));
    }
    // The warm searches did read their strengths from the postings.
    expect(strengths.mock.results.some((result) => result.value !== undefined)).toBe(true);
    strengths.mockRestore();
  });
});

describe('namespace postings', () => {
  it('give exactly the live entries inside a namespace, through additions and removals', () => {
    const next = random(9);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
    const SEGMENTS = ['a', 'b', 'ab', 'a.b', ''];
    const entryWith = (id: string) => ({ id, doc: makeDoc(`${id} word`) }) as unknown as IndexEntry;
    const idOf = () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(SEGMENTS)).join('/');
    const postings = new Postings();
    let live = Array.from({ length: 300 }, () => entryWith(idOf()));
    for (let round = 0; round < 4; round++) {
      postings.sync(live);
      for (const query of ['', 'word', 'NOT word']) {
        for (let i = 0; i < 30; i++) {
          const namespace = idOf() || 'a';
          const slots = postings.candidateSlots(parseQuery(query), 0, namespace);
          const got = (slots ?? []).map((slot) => postings.entryAt(slot));
          // Every entry holds `word`: each query's answer is the whole namespace.
          expect(new Set(got)).toEqual(new Set(live.filter((e) => inNamespace(e.id, namespace))));
        }
      }
      live = [
        ...live.filter(() => next() > 0.3),
        ...Array.from({ length: round === 1 ? 1200 : 30 }, () => entryWith(idOf())),
      ];
    }
  });
});
