/**
 * fnmatch-style wildcards matched in O(text × pattern) time at worst, never by a backtracking
 * regex: a search for `a*a*a*a*b` over a long word compiled to `^a.*a.*a.*a.*b$` took seconds to
 * minutes and blocked the server (attack 10). `*` matches any run of characters, `?` exactly one,
 * and, where enabled, `[…]` one character of a class (`[!…]` or `[^…]` negated, `a-z` ranges).
 * Characters are code points, as a `u`-flag regex would see them.
 */

type Token = { kind: 'star' } | { kind: 'one'; test: (ch: string) => boolean };

function classTest(body: string): (ch: string) => boolean {
  const negated = body.startsWith('!') || body.startsWith('^');
  const chars = [...(negated ? body.slice(1) : body)];
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < chars.length; i++) {
    const low = chars[i]!.codePointAt(0)!;
    if (chars[i + 1] === '-' && i + 2 < chars.length) {
      ranges.push([low, chars[i + 2]!.codePointAt(0)!]);
      i += 2;
    } else ranges.push([low, low]);
  }
  return (ch) => {
    const code = ch.codePointAt(0)!;
    return ranges.some(([from, to]) => code >= from && code <= to) !== negated;
  };
}

function tokenize(pattern: string, classes: boolean): Token[] {
  const chars = [...pattern];
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (ch === '?') tokens.push({ kind: 'one', test: () => true });
    else if (ch === '[' && classes) {
      const end = chars.indexOf(']', i + 2);
      if (end === -1) tokens.push({ kind: 'one', test: (c) => c === '[' });
      else {
        tokens.push({ kind: 'one', test: classTest(chars.slice(i + 1, end).join('')) });
        i = end;
      }
    } else tokens.push({ kind: 'one', test: (c) => c === ch });
  }
  return tokens;
}

/** A matcher for the whole text against `pattern`. */
export function wildcardMatcher(
  pattern: string,
  options: { classes?: boolean } = {},
): (text: string) => boolean {
  const tokens = tokenize(pattern, options.classes === true);
  return (text) => {
    const chars = [...text];
    let t = 0;
    let p = 0;
    // The last `*` seen and where in the text it started: on a mismatch, let it take one more
    // character and retry from there. Each retry moves `starText` forward, so this is O(n·m).
    let star = -1;
    let starText = 0;
    while (t < chars.length) {
      const token = tokens[p];
      if (token?.kind === 'one' && token.test(chars[t]!)) {
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
  };
}
