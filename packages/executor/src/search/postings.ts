/**
 * Postings of one root's entries: which entries hold each word, and which words hold each
 * three-character run, so a query tests only the entries that can match it rather than every
 * entry of the project.
 *
 * Candidates are a superset of the matches (search.ts still evaluates each one), found from what
 * the query language means by a match (query.ts):
 * - a term is a substring of the text; a run of word characters inside it lies within one word
 *   of the text, so the entries holding a word that contains the run are the candidates (a term
 *   with several runs, `file-system`, needs all of them);
 * - a fuzzy term also matches any word within its distance;
 * - a wildcard matches whole words;
 * - OR is a union, AND an intersection of its positive children; NOT (and a query without a
 *   positive part) leaves every entry a candidate.
 *
 * Entries are added and removed as the walk that finds them changes (`sync`); a removed entry
 * leaves a hole until holes outnumber the live entries, then the postings are built afresh.
 */
import type { IndexEntry } from './entry.js';
import { FieldWords, MAX_FIELDS, ranksByWords } from './field-words.js';
import { levenshtein, wordsOf } from './match.js';
import type { QueryNode } from './query.js';
import type { Leaf, LeafLookup, RankFields } from './rank.js';
import { strengthFromHits, wildcardStrength } from './rank.js';

const GRAM = 3;
/** Fewer dead slots than this are never worth a rebuild. */
const MIN_REBUILD = 1_024;

/** Runs of word characters (letters, marks, digits, underscore), as `wordsOf` splits text. */
const WORD_RUN = /[\p{L}\p{M}\p{N}_]+/gu;
const WHOLE_WORD = /^[\p{L}\p{M}\p{N}_]+$/u;

export class Postings {
  /** Slot → entry (undefined once removed). */
  private slots: (IndexEntry | undefined)[] = [];
  private readonly slotOf = new Map<IndexEntry, number>();
  /** Word → slots of the entries whose text holds it (removed slots linger until a rebuild). */
  private words = new Map<string, number[]>();
  /** Three-character run → the words holding it. */
  private grams = new Map<string, string[]>();
  /** Each id and each of its folders (`a`, `a/b` of `a/b/c`) → slots: a scope's namespace. */
  private namespaces = new Map<string, number[]>();
  private dead = 0;
  /** Per slot, the last `mark` that touched it (set operations without allocating sets). */
  private marks = new Uint32Array(0);
  private mark = 0;
  /** Built on the first ranking by word, for one kind's ranked fields (`key`). */
  private fieldWords?: { key: string; index: FieldWords };

  /** The live entries (any order). */
  get size(): number {
    return this.slotOf.size;
  }

  /** Makes the postings hold exactly these entries (compared by identity). */
  sync(entries: readonly IndexEntry[]): void {
    const present = new Set<IndexEntry>();
    for (const entry of entries) {
      present.add(entry);
      if (!this.slotOf.has(entry)) this.add(entry);
    }
    if (present.size !== this.slotOf.size) {
      for (const [entry, slot] of this.slotOf) {
        if (present.has(entry)) continue;
        this.slotOf.delete(entry);
        this.slots[slot] = undefined;
        this.dead++;
      }
    }
    if (this.dead > MIN_REBUILD && this.dead > this.slotOf.size) this.rebuild();
  }

  /** Every live entry. */
  all(): IndexEntry[] {
    return [...this.slotOf.keys()];
  }

  /** The entries that can match `node` (a superset of its matches), or undefined for all of them. */
  candidates(node: QueryNode, fuzzy: number): IndexEntry[] | undefined {
    return this.candidateSlots(node, fuzzy)?.map((slot) => this.slots[slot]!);
  }

  /**
   * The live slots that can match `node` (inside `namespace` when given: ids equal to it or under
   * it), or undefined for all of them.
   */
  candidateSlots(node: QueryNode, fuzzy: number, namespace?: string): number[] | undefined {
    const found = this.find(node, fuzzy);
    const slots = namespace ? this.intersect([found, this.namespaces.get(namespace) ?? []]) : found;
    return slots?.filter((slot) => this.slots[slot] !== undefined);
  }

  /** Every live slot. */
  liveSlots(): number[] {
    return [...this.slotOf.values()];
  }

  /** The live entry in a slot. */
  entryAt(slot: number): IndexEntry {
    return this.slots[slot]!;
  }

  /**
   * A leaf's strength in any live entry read from the postings (see field-words.ts), or undefined
   * when the leaf must be ranked entry by entry (phrases, wildcards, fuzzy terms, other terms).
   */
  strengths(leaf: Leaf, rank: RankFields, fuzzy: number): LeafLookup {
    if (rank.fields.length > MAX_FIELDS) return undefined;
    const weights = rank.fields.map(([, weight]) => weight);
    if (leaf.type === 'wildcard') {
      // Fuzzy matching never applies to a wildcard.
      const hits = this.fieldIndex(rank).globHits(
        leaf.glob,
        this.slots.length,
        weights,
        rank.previewStrength,
      );
      return (entry, slot) => wildcardStrength(leaf.glob, entry, hits, slot);
    }
    if (leaf.type !== 'term' || fuzzy > 0 || !ranksByWords(leaf.term)) return undefined;
    const hits = this.fieldIndex(rank).hits(leaf.term, this.slots.length, weights, rank.previewStrength);
    return (_entry, slot) => strengthFromHits(hits, slot);
  }

  private fieldIndex(rank: RankFields): FieldWords {
    const names = rank.fields.map(([field]) => field);
    const key = `${rank.previewStrength > 0}:${names.join('\0')}`;
    if (this.fieldWords?.key === key) return this.fieldWords.index;
    const index = new FieldWords(names, rank.previewStrength > 0);
    for (const [entry, slot] of this.slotOf) index.add(slot, entry);
    this.fieldWords = { key, index };
    return index;
  }

  /**
   * Whether every candidate of `node` matches it, so that testing the query on each is not
   * needed: terms of word characters only (fuzzy or not), wildcards, and AND / OR of those.
   */
  static exact(node: QueryNode): boolean {
    switch (node.type) {
      case 'all':
      case 'wildcard':
        return true;
      case 'term':
        return WHOLE_WORD.test(node.term);
      case 'and':
      case 'or':
        return node.children.every((child) => Postings.exact(child));
      default:
        return false;
    }
  }

  private add(entry: IndexEntry): void {
    const slot = this.slots.length;
    this.slots.push(entry);
    this.slotOf.set(entry, slot);
    this.fieldWords?.index.add(slot, entry);
    const { id } = entry;
    for (let end = id.indexOf('/'); ; end = id.indexOf('/', end + 1)) {
      const namespace = end === -1 ? id : id.slice(0, end);
      const list = this.namespaces.get(namespace);
      if (list) list.push(slot);
      else this.namespaces.set(namespace, [slot]);
      if (end === -1) break;
    }
    for (const word of new Set(wordsOf(entry.doc.lower))) {
      const list = this.words.get(word);
      if (list) {
        list.push(slot);
        continue;
      }
      this.words.set(word, [slot]);
      for (let i = 0; i + GRAM <= word.length; i++) {
        const gram = word.slice(i, i + GRAM);
        const holders = this.grams.get(gram);
        if (!holders) this.grams.set(gram, [word]);
        else if (holders[holders.length - 1] !== word) holders.push(word);
      }
    }
  }

  private rebuild(): void {
    const live = this.all();
    this.slots = [];
    this.slotOf.clear();
    this.words = new Map();
    this.grams = new Map();
    this.namespaces = new Map();
    this.fieldWords = undefined;
    this.dead = 0;
    for (const entry of live) this.add(entry);
  }

  /** A fresh mark for set operations over slots. */
  private nextMark(): number {
    if (this.marks.length < this.slots.length) this.marks = new Uint32Array(this.slots.length * 2);
    if (++this.mark === 0xffffffff) {
      this.marks.fill(0);
      this.mark = 1;
    }
    return this.mark;
  }

  /** Slots that can match (duplicates removed), or undefined for all. */
  private find(node: QueryNode, fuzzy: number): number[] | undefined {
    switch (node.type) {
      case 'all':
      case 'not':
        return undefined;
      case 'term': {
        const exact = this.substring(node.term);
        if (exact === undefined || fuzzy <= 0) return exact;
        return this.union([exact, this.near(node.term, fuzzy)]);
      }
      case 'phrase':
        return this.substring(node.phrase);
      case 'wildcard':
        if (!node.glob.possible) return [];
        return this.wordsWhere(this.longest(node.glob.literals), (word) => node.glob.matches(word));
      case 'and': {
        const parts: number[][] = [];
        for (const child of node.children) {
          const found = this.find(child, fuzzy);
          if (found !== undefined) parts.push(found);
        }
        return parts.length === 0 ? undefined : this.intersect(parts);
      }
      case 'or': {
        const parts: number[][] = [];
        for (const child of node.children) {
          const found = this.find(child, fuzzy);
          if (found === undefined) return undefined;
          parts.push(found);
        }
        return this.union(parts);
      }
    }
  }

  /** Entries whose text contains `text`: those holding a word around each of its word runs. */
  private substring(text: string): number[] | undefined {
    const runs = text.match(WORD_RUN);
    // Nothing but spaces and punctuation: no word to look up.
    if (!runs) return undefined;
    return this.intersect(runs.map((run) => this.wordsWhere(run, (word) => word.includes(run))));
  }

  /** Entries holding a word within `distance` edits of `term` (fuzzy matching, query.ts). */
  private near(term: string, distance: number): number[] {
    const found: number[][] = [];
    for (const [word, slots] of this.words) {
      if (Math.abs(word.length - term.length) <= distance && levenshtein(term, word, distance) <= distance)
        found.push(slots);
    }
    return this.union(found);
  }

  /**
   * Entries holding a word that passes `test`; every such word contains `literal` (narrowed
   * through its three-character runs when it has any).
   */
  private wordsWhere(literal: string, test: (word: string) => boolean): number[] {
    let pool: Iterable<string> = this.words.keys();
    if (literal.length >= GRAM) {
      let rarest: string[] | undefined;
      for (let i = 0; i + GRAM <= literal.length; i++) {
        const holders = this.grams.get(literal.slice(i, i + GRAM));
        if (!holders) return [];
        if (!rarest || holders.length < rarest.length) rarest = holders;
      }
      pool = rarest!;
    }
    const found: number[][] = [];
    for (const word of pool) if (test(word)) found.push(this.words.get(word)!);
    return this.union(found);
  }

  private longest(literals: string[]): string {
    let best = '';
    for (const literal of literals) if (literal.length > best.length) best = literal;
    return best;
  }

  private union(lists: number[][]): number[] {
    if (lists.length === 1) return lists[0]!;
    const mark = this.nextMark();
    const { marks } = this;
    const out: number[] = [];
    for (const list of lists) {
      for (const slot of list) {
        if (marks[slot] === mark) continue;
        marks[slot] = mark;
        out.push(slot);
      }
    }
    return out;
  }

  /** Slots in every list (each list free of duplicates); undefined lists stand for all slots. */
  private intersect(lists: (number[] | undefined)[]): number[] | undefined {
    const bounded = lists.filter((list): list is number[] => list !== undefined);
    if (bounded.length === 0) return undefined;
    bounded.sort((a, b) => a.length - b.length);
    let current = bounded[0]!;
    for (let i = 1; i < bounded.length && current.length > 0; i++) {
      const mark = this.nextMark();
      const { marks } = this;
      for (const slot of bounded[i]!) marks[slot] = mark;
      current = current.filter((slot) => marks[slot] === mark);
    }
    return current;
  }
}
