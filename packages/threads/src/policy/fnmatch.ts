/**
 * Python `fnmatch.fnmatchcase` semantics for capability strings (spec threads §4): `*` matches any
 * run of characters **including dots**, `?` exactly one character, `[…]` one character of a class
 * (`[!…]` negated; `^` is an ordinary character, as in Python), anchored and case-sensitive.
 * Characters are code points.
 *
 * Matching never builds a backtracking regex: a capability such as `a*a*a*…b` against a long name
 * compiled to `^a.*a.*…b$` takes exponential time. The matcher below remembers only the last `*`
 * and retries from it, so it is O(text × pattern) at worst and linear in practice.
 *
 * `@ryeos/executor` has a similar matcher (`src/wildcard.ts`) but does not export it, and its
 * classes treat `^` as negation and `]` as a terminator even in first position, which differs from
 * Python; capability checks need Python's exact behaviour, so this module has its own tokenizer.
 *
 * Besides matching, the module answers two questions about whole patterns that attenuation and the
 * palette need: does one pattern cover every name another matches (`globCovers`), and can two
 * patterns match a common name (`globIntersects`).
 */

const MAX_CODE_POINT = 0x10ffff;

/** Sorted, disjoint, inclusive code-point ranges. */
type Ranges = ReadonlyArray<readonly [number, number]>;

type Token = { kind: 'star' } | { kind: 'set'; ranges: Ranges };

const ANY: Ranges = [[0, MAX_CODE_POINT]];

function normalizeRanges(ranges: Array<[number, number]>): Array<[number, number]> {
  const sorted = ranges.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [lo, hi] of sorted) {
    const last = out.at(-1);
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(ranges: Ranges): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

function inRanges(ranges: Ranges, code: number): boolean {
  for (const [lo, hi] of ranges) {
    if (code < lo) return false;
    if (code <= hi) return true;
  }
  return false;
}

const cp = (ch: string): number => ch.codePointAt(0)!;

/**
 * A `[…]` class starting at `chars[start]` (just after the `[`), ported from CPython's
 * `fnmatch.translate`: a `]` right after `[` or `[!` is a member, ranges run between the pieces
 * split at `-`, an empty range (`z-a`) is dropped together with its endpoints, and the class is
 * negated when what is left starts with `!`. Returns undefined for an unclosed `[` (a literal).
 */
function parseClass(chars: string[], start: number): { ranges: Ranges; end: number } | undefined {
  const n = chars.length;
  let j = start;
  if (j < n && chars[j] === '!') j++;
  if (j < n && chars[j] === ']') j++;
  while (j < n && chars[j] !== ']') j++;
  if (j >= n) return undefined;

  let chunks: string[][];
  const body = chars.slice(start, j);
  if (!body.includes('-')) chunks = [body];
  else {
    chunks = [];
    let i = start;
    let k = chars[start] === '!' ? start + 2 : start + 1;
    for (;;) {
      let found = -1;
      for (let q = k; q < j; q++) {
        if (chars[q] === '-') {
          found = q;
          break;
        }
      }
      if (found < 0) break;
      chunks.push(chars.slice(i, found));
      i = found + 1;
      k = found + 3;
    }
    const last = chars.slice(i, j);
    if (last.length) chunks.push(last);
    else chunks.at(-1)!.push('-');
    for (let m = chunks.length - 1; m > 0; m--) {
      const before = chunks[m - 1]!;
      const after = chunks[m]!;
      if (cp(before.at(-1)!) > cp(after[0]!)) {
        chunks[m - 1] = [...before.slice(0, -1), ...after.slice(1)];
        chunks.splice(m, 1);
      }
    }
  }

  const negated = chunks[0]![0] === '!';
  if (negated) chunks[0] = chunks[0]!.slice(1);
  const ranges: Array<[number, number]> = [];
  chunks.forEach((chunk, m) => {
    chunk.forEach((ch, q) => {
      if (m > 0 && q === 0) return; // the end of the range opened by the previous piece
      if (m < chunks.length - 1 && q === chunk.length - 1) ranges.push([cp(ch), cp(chunks[m + 1]![0]!)]);
      else ranges.push([cp(ch), cp(ch)]);
    });
  });
  const members = normalizeRanges(ranges);
  return { ranges: negated ? complement(members) : members, end: j };
}

function tokenize(pattern: string): Token[] {
  const chars = [...pattern];
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (ch === '?') tokens.push({ kind: 'set', ranges: ANY });
    else if (ch === '[') {
      const parsed = parseClass(chars, i + 1);
      if (parsed) {
        tokens.push({ kind: 'set', ranges: parsed.ranges });
        i = parsed.end;
      } else tokens.push({ kind: 'set', ranges: [[cp('['), cp('[')]] });
    } else tokens.push({ kind: 'set', ranges: [[cp(ch), cp(ch)]] });
  }
  return tokens;
}

/** A compiled pattern: match names against it many times. */
export class Glob {
  readonly tokens: readonly Token[];

  constructor(readonly pattern: string) {
    this.tokens = tokenize(pattern);
  }

  matches(name: string): boolean {
    const tokens = this.tokens;
    const text = [...name].map(cp);
    let t = 0;
    let p = 0;
    // The last `*` and where in the text it started: on a mismatch it takes one more character
    // and matching resumes after it. Earlier stars never need revisiting (a later star can absorb
    // whatever they would have), so each retry moves forward: O(text × pattern) at worst.
    let star = -1;
    let starText = 0;
    while (t < text.length) {
      const token = tokens[p];
      if (token?.kind === 'set' && inRanges(token.ranges, text[t]!)) {
        t++;
        p++;
      } else if (token?.kind === 'star') {
        star = p++;
        starText = t;
      } else if (star !== -1) {
        p = star + 1;
        t = ++starText;
      } else return false;
    }
    while (tokens[p]?.kind === 'star') p++;
    return p === tokens.length;
  }
}

const cache = new Map<string, Glob>();
const CACHE_LIMIT = 512;

/** The compiled form of `pattern`, cached (capability lists are small and checked often). */
export function compileGlob(pattern: string): Glob {
  let glob = cache.get(pattern);
  if (!glob) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    glob = new Glob(pattern);
    cache.set(pattern, glob);
  }
  return glob;
}

/** `fnmatch.fnmatchcase(name, pattern)`: does the whole of `name` match `pattern`? */
export function fnmatch(name: string, pattern: string): boolean {
  return compileGlob(pattern).matches(name);
}

/** True when the pattern contains a wildcard (`*`, `?` or `[`), i.e. may match more than itself. */
export function hasWildcard(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

// ---------------------------------------------------------------------------------------------
// Whole-pattern questions, answered on the patterns' automata.
//
// A pattern of n tokens is an NFA with states 0..n (state i: "token i is next"; a star loops).
// Characters are grouped into the intervals cut by every range bound of both patterns, so one
// representative per interval stands for all of its characters. The pair automaton explores
// (states of A, states of B) subsets breadth-first, capped so a pathological pattern cannot make
// a capability check slow; reaching the cap gives the cautious answer.

const MAX_PAIRS = 20_000;

function closure(tokens: readonly Token[], states: Iterable<number>): number[] {
  const out = new Set<number>();
  for (let s of states) {
    out.add(s);
    while (tokens[s]?.kind === 'star') out.add(++s);
  }
  return [...out].sort((a, b) => a - b);
}

function step(tokens: readonly Token[], states: readonly number[], code: number): number[] {
  const next: number[] = [];
  for (const s of states) {
    const token = tokens[s];
    if (!token) continue;
    if (token.kind === 'star') next.push(s);
    else if (inRanges(token.ranges, code)) next.push(s + 1);
  }
  return closure(tokens, next);
}

function alphabet(...patterns: Array<readonly Token[]>): number[] {
  const cuts = new Set<number>([0]);
  for (const tokens of patterns) {
    for (const token of tokens) {
      if (token.kind !== 'set') continue;
      for (const [lo, hi] of token.ranges) {
        cuts.add(lo);
        if (hi < MAX_CODE_POINT) cuts.add(hi + 1);
      }
    }
  }
  return [...cuts].sort((a, b) => a - b);
}

/**
 * Walks the pair automaton of `a` and `b`; `stop(acceptA, acceptB)` returns true to end the walk
 * with `found`. Returns 'found', 'exhausted' (no pair stopped it) or 'capped'.
 */
function explore(
  a: readonly Token[],
  b: readonly Token[],
  stop: (acceptA: boolean, acceptB: boolean) => boolean,
): 'found' | 'exhausted' | 'capped' {
  const symbols = alphabet(a, b);
  const start: [number[], number[]] = [closure(a, [0]), closure(b, [0])];
  const seen = new Set<string>();
  const queue: Array<[number[], number[]]> = [start];
  seen.add(`${start[0].join(',')}|${start[1].join(',')}`);
  for (let head = 0; head < queue.length; head++) {
    const [sa, sb] = queue[head]!;
    if (stop(sa.includes(a.length), sb.includes(b.length))) return 'found';
    for (const code of symbols) {
      const na = step(a, sa, code);
      if (!na.length) continue; // `a` can no longer match: nothing below this pair matters
      const nb = step(b, sb, code);
      const key = `${na.join(',')}|${nb.join(',')}`;
      if (seen.has(key)) continue;
      if (seen.size >= MAX_PAIRS) return 'capped';
      seen.add(key);
      queue.push([na, nb]);
    }
  }
  return 'exhausted';
}

/**
 * True when every name `inner` matches is also matched by `outer` (language inclusion). Sound:
 * a pattern pair too complex to decide within the work cap answers false.
 */
export function globCovers(outer: string, inner: string): boolean {
  if (outer === inner) return true;
  if (!hasWildcard(inner)) return fnmatch(inner, outer);
  const result = explore(compileGlob(inner).tokens, compileGlob(outer).tokens, (inA, inB) => inA && !inB);
  return result === 'exhausted';
}

/**
 * True when some name matches both patterns. A pair too complex to decide within the work cap
 * answers true (callers use it to offer, never to grant).
 */
export function globIntersects(a: string, b: string): boolean {
  if (!hasWildcard(a)) return fnmatch(a, b);
  if (!hasWildcard(b)) return fnmatch(b, a);
  const result = explore(compileGlob(a).tokens, compileGlob(b).tokens, (inA, inB) => inA && inB);
  return result !== 'exhausted';
}
