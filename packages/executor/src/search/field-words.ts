/**
 * Which ranked field of which entry holds each word, so a query term's strength in every entry
 * (rank.ts) is read from the term's postings instead of searching each matching entry's fields:
 * ranking a broad query's thousands of matches then costs a lookup each.
 *
 * Only terms of letters, marks and digits take this path (`ranksByWords`): such a term is inside a
 * field's lower-cased text exactly when it is inside one of that text's words, and inside the id
 * or name exactly when it is inside one of their identity words (rank.ts splits those on anything
 * but letters, marks and digits), so the postings see every place the term can score.
 */
import type { IndexEntry } from './entry.js';
import { fieldDoc } from './entry.js';
import type { Glob } from './match.js';
import type { TermHits } from './rank.js';
import { identityWords } from './rank.js';

/** Field codes packed into the low bits of a posting (slot << CODE_BITS | code). */
const CODE_BITS = 5;
const CODE_MASK = (1 << CODE_BITS) - 1;
/** A word of the id or name that is the whole id or name. */
const WHOLE_NAME = 27;
/** A word of the id that is a whole `/`-separated segment of it. */
const ID_SEGMENT = 28;
/** Any other word of the id or name. */
const IDENTITY = 29;
const CONTENT = 30;
/** More ranked fields than codes: the caller ranks the slow way. */
export const MAX_FIELDS = WHOLE_NAME;
const GRAM = 3;
const ALNUM = /^[\p{L}\p{M}\p{N}]+$/u;

/** Whether a term's strengths can be read from the postings (see the module comment; wildcards
 * match whole words, of which the postings hold every one, so they always can). */
export function ranksByWords(term: string): boolean {
  return ALNUM.test(term);
}

export class FieldWords {
  /** Word → packed postings of the slots and fields holding it. */
  private readonly words = new Map<string, number[]>();
  /** Three-character run → the words holding it. */
  private readonly grams = new Map<string, string[]>();

  /**
   * @param fields the ranked fields (rank.ts `RankFields.fields`), in code order
   * @param preview whether the preview counts when no field holds the term
   */
  constructor(
    private readonly fields: readonly string[],
    private readonly preview: boolean,
  ) {}

  add(slot: number, entry: IndexEntry): void {
    for (let code = 0; code < this.fields.length; code++) {
      this.post(slot, code, fieldDoc(entry, this.fields[code]!).words);
    }
    if (this.preview) this.post(slot, CONTENT, fieldDoc(entry, 'content').words);
    const { id, name, words } = identityWords(entry);
    const segments = new Set(id.split('/'));
    for (const word of words) {
      const code = word === id || word === name ? WHOLE_NAME : segments.has(word) ? ID_SEGMENT : IDENTITY;
      this.post(slot, code, [word]);
    }
  }

  /**
   * Where `term` scores in each slot (arrays of `size` slots), with these field weights
   * (weight / top weight, in code order) and preview strength.
   */
  hits(term: string, size: number, weights: readonly number[], previewStrength: number): TermHits {
    return this.collect(this.holding(term), size, weights, previewStrength, (word, code) => {
      // rank.ts: the whole id or name 1, a whole id segment 0.9, an identity word 0.8, the start
      // of one 0.7, inside one 0.6 (the term has no `/`, so a segment equal to it is a word).
      if (word !== term) return { field: 0.8, identity: word.startsWith(term) ? 0.7 : 0.6 };
      return { field: 1, identity: code === WHOLE_NAME ? 1 : code === ID_SEGMENT ? 0.9 : 0.8 };
    });
  }

  /**
   * Where a wildcard matches a whole word in each slot, as `hits` does for a term. An identity
   * word scores 0.75; whether the whole name matches (0.9) is for the caller to test.
   */
  globHits(glob: Glob, size: number, weights: readonly number[], previewStrength: number): TermHits {
    const words = glob.possible ? this.matching(glob) : [];
    return this.collect(words, size, weights, previewStrength, () => ({ field: 1, identity: 0.75 }));
  }

  private collect(
    words: readonly string[],
    size: number,
    weights: readonly number[],
    previewStrength: number,
    strengthOf: (word: string, code: number) => { field: number; identity: number },
  ): TermHits {
    const hits: TermHits = new Float64Array(size);
    for (const word of words) {
      const plain = strengthOf(word, IDENTITY);
      for (const posting of this.words.get(word)!) {
        const slot = posting >>> CODE_BITS;
        const code = posting & CODE_MASK;
        if (code >= WHOLE_NAME && code <= IDENTITY) {
          const { identity } = code === IDENTITY ? plain : strengthOf(word, code);
          hits[slot] = Math.max(hits[slot]!, identity);
        } else if (code === CONTENT) {
          if (hits[slot]! <= 0) hits[slot] = Math.min(hits[slot]!, -previewStrength * plain.field);
        } else hits[slot] = Math.max(hits[slot]!, 0.5 * weights[code]! * plain.field);
      }
    }
    return hits;
  }

  private post(slot: number, code: number, words: readonly string[]): void {
    const posting = (slot << CODE_BITS) | code;
    for (const word of words) {
      const list = this.words.get(word);
      if (list) {
        // A word can repeat in one text's list only through duplicates the text already removed.
        list.push(posting);
        continue;
      }
      this.words.set(word, [posting]);
      for (let i = 0; i + GRAM <= word.length; i++) {
        const gram = word.slice(i, i + GRAM);
        const holders = this.grams.get(gram);
        if (!holders) this.grams.set(gram, [word]);
        else if (holders[holders.length - 1] !== word) holders.push(word);
      }
    }
  }

  /** The indexed words a wildcard matches: each holds its longest literal. */
  private matching(glob: Glob): string[] {
    let longest = '';
    for (const literal of glob.literals) if (literal.length > longest.length) longest = literal;
    return this.holding(longest).filter((word) => glob.matches(word));
  }

  /** The indexed words containing `term`. */
  private holding(term: string): string[] {
    if (term.length < GRAM) return [...this.words.keys()].filter((word) => word.includes(term));
    let rarest: string[] | undefined;
    for (let i = 0; i + GRAM <= term.length; i++) {
      const holders = this.grams.get(term.slice(i, i + GRAM));
      if (!holders) return [];
      if (!rarest || holders.length < rarest.length) rarest = holders;
    }
    return rarest!.filter((word) => word.includes(term));
  }
}
