/**
 * How well a matching item answers a query: the score search sorts by (0..1).
 *
 * Which items match is the query language's business (query.ts); this only ranks them, so what a
 * user means comes first: `read file` puts rye/file-system/read (named `read`, in `file-system`)
 * before a tool that merely says "read" and "files" in its description. Each positive term of the
 * query (terms, phrases and wildcards not under NOT, plus those of the `fields` sub-queries)
 * scores where it is found best:
 *
 *   1.0   the whole id, ref or name                      `read`, `rye/file-system/read`
 *   0.9   whole id segments                               `file-system`, `file-system/read`
 *   0.8   a word of the id or name                        `file`, `system` (of file-system)
 *   0.7   the start of such a word                        `sys`
 *   0.6   elsewhere in the id or name                     `ile`
 *   ≤0.5  a weighted metadata field (extractor `search_fields`: description, title, tags,
 *         category, …): 0.5 × weight / top weight as a word or phrase, 0.4 × … inside a word
 *   0.1   directive and knowledge text (preview) only; tool source never counts
 *   fuzzy matches (when enabled) score less than exact ones in the same place
 *
 * The score is the mean over the terms, so an item that matches every word of a query outranks
 * one that matches some; a term found nowhere that counts scores 0. A query with no positive
 * term (empty, `*`, `NOT x`) lists its matches with score 1. Items scoring 0 — matched only in
 * a tool's source — are not results.
 */
import type { IndexEntry } from './entry.js';
import { fieldDoc } from './entry.js';
import type { Glob, TextDoc } from './match.js';
import { levenshtein } from './match.js';
import type { QueryNode } from './query.js';

/**
 * Per slot, where a term scores best, in this module's order of precedence: an identity strength
 * (0.6–1) or a weighted field's (at most 0.5) as a positive number, which `max` orders rightly
 * since every identity strength is above every field's; else the preview's, stored negated so a
 * field found later still takes precedence over it; 0 when nowhere.
 */
export type TermHits = Float64Array;

/** A query leaf that can be found: a term, a phrase or a wildcard. */
export type Leaf = Extract<QueryNode, { type: 'term' | 'phrase' | 'wildcard' }>;

/** An item's id and name, prepared once for ranking (kept on the index entry). */
interface Identity {
  id: string;
  name: string;
  ref: string;
  /** `/id/`, to find whole segments. */
  padded: string;
  /** Words of the id and the name (split at anything but letters and digits). */
  words: string[];
}

const NOT_ALNUM = /[^\p{L}\p{M}\p{N}]+/u;

function identityOf(entry: IndexEntry): Identity {
  if (entry.identity) return entry.identity as Identity;
  const id = entry.id.toLowerCase();
  const name = entry.nameLower;
  const words = new Set([...id.split(NOT_ALNUM), ...name.split(NOT_ALNUM)]);
  words.delete('');
  const identity: Identity = { id, name, ref: entry.ref.toLowerCase(), padded: `/${id}/`, words: [...words] };
  entry.identity = identity;
  return identity;
}

/**
 * An entry's lower-cased id and name, and the distinct words of both (split at anything but
 * letters and digits).
 */
export function identityWords(entry: IndexEntry): { id: string; name: string; words: readonly string[] } {
  return identityOf(entry);
}

/** The leaves that count for ranking: everything not under a NOT. */
export function positiveLeaves(node: QueryNode, into: Leaf[] = []): Leaf[] {
  switch (node.type) {
    case 'term':
    case 'phrase':
    case 'wildcard':
      if (node.type !== 'phrase' || node.phrase.trim() !== '') into.push(node);
      break;
    case 'and':
    case 'or':
      for (const child of node.children) positiveLeaves(child, into);
      break;
    default:
      break;
  }
  return into;
}

export interface RankFields {
  /**
   * Weighted fields other than the name (which the identity covers), with weight / top weight,
   * heaviest first.
   */
  fields: [string, number][];
  /** Whether the preview (body text) counts, and how much, when no weighted field holds it. */
  previewStrength: number;
}

/**
 * The fields a kind's items are ranked on. `content` (the preview) counts only when the
 * extractor weights it; otherwise directive and knowledge text still counts a little, tool source
 * not at all.
 */
export function rankFields(weights: [string, number][], kind: string): RankFields {
  const top = Math.max(0, ...weights.map(([, w]) => w));
  // Heaviest first: a leaf found in one field needs no look at fields that cannot score more.
  const fields = weights
    .filter(([field, w]) => field !== 'name' && w > 0 && top > 0)
    .map(([field, w]): [string, number] => [field, w / top])
    .sort((a, b) => b[1] - a[1]);
  const weighsContent = fields.some(([field]) => field === 'content');
  return { fields, previewStrength: weighsContent || kind === 'tool' ? 0 : 0.1 };
}

const boundaryCache = new Map<string, RegExp>();

/** The phrase as whole words (not inside a longer word). */
function boundaryPattern(phrase: string): RegExp {
  let pattern = boundaryCache.get(phrase);
  if (!pattern) {
    const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = new RegExp(`(?<![\\p{L}\\p{M}\\p{N}_])${escaped}(?![\\p{L}\\p{M}\\p{N}_])`, 'u');
    if (boundaryCache.size > 1000) boundaryCache.clear();
    boundaryCache.set(phrase, pattern);
  }
  return pattern;
}

/** 1 = whole words, 0.8 = inside a word, 0 = absent. */
function textHit(leaf: Leaf, doc: TextDoc): number {
  switch (leaf.type) {
    case 'term':
      if (!doc.lower.includes(leaf.term)) return 0;
      return doc.words.includes(leaf.term) ? 1 : 0.8;
    case 'phrase':
      if (!doc.lower.includes(leaf.phrase)) return 0;
      return boundaryPattern(leaf.phrase).test(doc.lower) ? 1 : 0.8;
    case 'wildcard':
      return globHit(leaf.glob, doc.words) ? 1 : 0;
  }
}

function globHit(glob: Glob, words: string[]): boolean {
  if (!glob.possible) return false;
  for (const word of words) if (glob.matches(word)) return true;
  return false;
}

function near(term: string, words: string[], distance: number): boolean {
  for (const word of words) {
    if (Math.abs(word.length - term.length) <= distance && levenshtein(term, word, distance) <= distance)
      return true;
  }
  return false;
}

/** The last `/text/` made: a query ranks every hit with the same few texts, so reuse it. */
let lastSegment = { text: '', segment: '//' };

function segmentOf(text: string): string {
  if (lastSegment.text !== text) lastSegment = { text, segment: `/${text}/` };
  return lastSegment.segment;
}

function identityStrength(leaf: Leaf, idn: Identity): number {
  if (leaf.type === 'wildcard') {
    if (!leaf.glob.possible) return 0;
    if (leaf.glob.matches(idn.name)) return 0.9;
    return globHit(leaf.glob, idn.words) ? 0.75 : 0;
  }
  const text = leaf.type === 'term' ? leaf.term : leaf.phrase;
  // Every other strength below needs the text inside the id or the name: most hits have neither.
  if (!idn.id.includes(text) && !idn.name.includes(text)) return text === idn.ref ? 1 : 0;
  if (text === idn.id || text === idn.name) return 1;
  if (idn.padded.includes(segmentOf(text))) return 0.9;
  if (idn.words.includes(text)) return 0.8;
  for (const word of idn.words) if (word.startsWith(text)) return 0.7;
  return 0.6;
}

/** How well one leaf is found in one item (see the table above). */
function leafStrength(leaf: Leaf, entry: IndexEntry, rank: RankFields, fuzzy: number): number {
  const idn = identityOf(entry);
  let best = identityStrength(leaf, idn);
  // Every identity strength is above any field's (at most 0.5).
  if (best > 0) return best;
  for (const [field, weight] of rank.fields) {
    if (best >= 0.5 * weight) break;
    const hit = textHit(leaf, fieldDoc(entry, field));
    if (hit > 0) best = Math.max(best, 0.5 * weight * hit);
  }
  if (best === 0 && rank.previewStrength > 0) {
    best = rank.previewStrength * textHit(leaf, fieldDoc(entry, 'content'));
  }
  if (best > 0 || fuzzy <= 0 || leaf.type !== 'term') return best;
  // Fuzzy: a word within `fuzzy` edits, worth less than the same word spelt right.
  if (near(leaf.term, idn.words, fuzzy)) return 0.4;
  for (const [field, weight] of rank.fields) {
    if (near(leaf.term, fieldDoc(entry, field).words, fuzzy)) best = Math.max(best, 0.25 * weight);
  }
  if (best === 0 && rank.previewStrength > 0 && near(leaf.term, fieldDoc(entry, 'content').words, fuzzy)) {
    best = rank.previewStrength / 2;
  }
  return best;
}

/**
 * A term's strength in one entry from where the postings found it (field-words.ts): the number
 * `leafStrength` gives without fuzzy matching.
 */
export function strengthFromHits(hits: TermHits, slot: number): number {
  const best = hits[slot]!;
  return best >= 0 ? best : -best;
}

/** A wildcard's strength from its postings hits: a match of the whole name is tested here. */
export function wildcardStrength(glob: Glob, entry: IndexEntry, hits: TermHits, slot: number): number {
  if (glob.possible && glob.matches(identityOf(entry).name)) return 0.9;
  return strengthFromHits(hits, slot);
}

/** A leaf's strength read from the postings, when they can give it (`slot`: the entry's there). */
export type LeafLookup = ((entry: IndexEntry, slot: number) => number) | undefined;

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** The item's score for these leaves: the mean strength, rounded to 4 places; 1 without leaves. */
export function rankScore(entry: IndexEntry, leaves: Leaf[], rank: RankFields, fuzzy: number): number {
  if (leaves.length === 0) return 1;
  let sum = 0;
  for (const leaf of leaves) sum += leafStrength(leaf, entry, rank, fuzzy);
  return round4(Math.min(1, sum / leaves.length));
}

/** `rankScore`, taking each leaf's strength from its lookup when it has one (same sum, same order). */
export function rankScoreWith(
  entry: IndexEntry,
  slot: number,
  leaves: Leaf[],
  lookups: readonly LeafLookup[],
  rank: RankFields,
  fuzzy: number,
): number {
  if (leaves.length === 0) return 1;
  let sum = 0;
  for (let i = 0; i < leaves.length; i++) {
    const lookup = lookups[i];
    sum += lookup ? lookup(entry, slot) : leafStrength(leaves[i]!, entry, rank, fuzzy);
  }
  return round4(Math.min(1, sum / leaves.length));
}
