/**
 * Text primitives for search (spec interfaces §2.1): word splitting, bounded Levenshtein
 * distance, glob-against-word and proximity. All inputs are already lower-cased.
 */
import { wildcardMatcher } from '../wildcard.js';

/** A piece of searchable text, prepared once per index entry. */
export interface TextDoc {
  /** Lower-cased text. */
  readonly lower: string;
  /** Distinct `\w+` words, in first-occurrence order. */
  readonly words: string[];
  /** Every `\w+` word in order (for proximity); computed on demand. */
  sequence?: string[];
}

// Python's `\w` on str patterns is Unicode-aware: letters, marks, digits, underscore.
const WORD = /[\p{L}\p{M}\p{N}_]+/gu;

export function wordsOf(lower: string): string[] {
  return lower.match(WORD) ?? [];
}

/** Prepared text whose words are split on first need (most texts of a search need only `lower`). */
class Doc implements TextDoc {
  #words: string[] | undefined;
  sequence?: string[];

  constructor(readonly lower: string) {}

  get words(): string[] {
    this.#words ??= [...new Set(wordsOf(this.lower))];
    return this.#words;
  }
}

export function makeDoc(text: string): TextDoc {
  return new Doc(text.toLowerCase());
}

export const EMPTY_DOC: TextDoc = { lower: '', words: [], sequence: [] };

export function sequenceOf(doc: TextDoc): string[] {
  doc.sequence ??= wordsOf(doc.lower);
  return doc.sequence;
}

/**
 * Levenshtein distance between `a` and `b`, or `max + 1` as soon as it is known to exceed `max`.
 */
export function levenshtein(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (a.length < b.length) [a, b] = [b, a];
  if (a.length - b.length > max) return max + 1;
  if (b.length === 0) return a.length;
  let prev = new Array<number>(b.length + 1);
  let curr = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 0; i < a.length; i++) {
    curr[0] = i + 1;
    let rowMin = curr[0];
    const ca = a.charCodeAt(i);
    for (let j = 0; j < b.length; j++) {
      const cost = ca === b.charCodeAt(j) ? 0 : 1;
      const v = Math.min(prev[j + 1]! + 1, curr[j]! + 1, prev[j]! + cost);
      curr[j + 1] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev, curr] = [curr, prev];
  }
  return prev[b.length]!;
}

export interface Glob {
  /** Whether a whole word matches the pattern (linear-time matcher, no regex backtracking). */
  matches: (word: string) => boolean;
  /** Literal runs between `*`s; a word must contain each of them, so the text must too. */
  literals: string[];
  /** False when a literal holds a non-word character: no `\w+` word can ever match. */
  possible: boolean;
}

const WORD_ONLY = /^[\p{L}\p{M}\p{N}_]*$/u;

/** Compiles an fnmatch-style pattern (`*` any run, `?` one character) anchored to a whole word. */
export function compileGlob(pattern: string): Glob {
  const literals = pattern.split(/[*?]+/).filter(Boolean);
  const matcher = wildcardMatcher(pattern);
  // A matching word holds every literal: a cheap test first spares most words the matcher.
  const longest = literals.reduce((best, literal) => (literal.length > best.length ? literal : best), '');
  const matches = longest ? (word: string) => word.includes(longest) && matcher(word) : matcher;
  return { matches, literals, possible: literals.every((l) => WORD_ONLY.test(l)) };
}

export function globMatches(glob: Glob, doc: TextDoc): boolean {
  if (!glob.possible) return false;
  for (const literal of glob.literals) if (!doc.lower.includes(literal)) return false;
  for (const word of doc.words) if (glob.matches(word)) return true;
  return false;
}

/**
 * True when, with at least two terms, every term occurs (as a substring of a word) within
 * `maxDistance` word positions of some occurrence of the first term.
 */
export function proximityMatches(doc: TextDoc, terms: string[], maxDistance: number): boolean {
  if (terms.length < 2) return true;
  const words = sequenceOf(doc);
  const lists = new Map<string, number[]>();
  for (const term of terms) {
    if (lists.has(term)) continue;
    const positions: number[] = [];
    for (let i = 0; i < words.length; i++) if (words[i]!.includes(term)) positions.push(i);
    if (positions.length === 0) return false;
    lists.set(term, positions);
  }
  const [first, ...rest] = [...lists.values()];
  return first!.some((pos) => rest.every((list) => list.some((p) => Math.abs(pos - p) <= maxDistance)));
}
