/**
 * `python/ast`: reads the top-level literal assignments and the module docstring of a Python tool
 * without running Python. A small tokenizer walks the file one logical line at a time; indented
 * lines (function and class bodies, blocks) are only skimmed for strings, comments and brackets, and
 * top-level `NAME = <literal>` statements are evaluated the way `ast.literal_eval` would.
 */
import {
  assignField,
  checkFieldType,
  isKnownMetadataField,
  MalformedMetadataError,
  type MetadataParser,
  type ParsedMetadata,
} from './types.js';

// Token kinds.
const NAME = 0;
const NUM = 1;
const STR = 2;
const OP = 3;

interface Tok {
  k: number;
  /** NAME: the name; NUM: the source text; STR: the decoded value; OP: the operator. */
  v: string;
  line: number;
  /** STR only: bytes literal, f-string (or t-string), scan error. */
  b?: boolean;
  f?: boolean;
  err?: string;
}

// Character codes.
const C_TAB = 9;
const C_NL = 10;
const C_FF = 12;
const C_SP = 32;
const C_DQUOTE = 34;
const C_HASH = 35;
const C_QUOTE = 39;
const C_DOT = 46;
const C_0 = 48;
const C_7 = 55;
const C_9 = 57;
const C_SEMI = 59;
const C_EQ = 61;
const C_AT = 64;
const C_BSL = 92;
const C_LBRACE = 123;
const C_RBRACE = 125;

const STRING_PREFIXES = new Set(['r', 'u', 'b', 'br', 'rb', 'f', 'fr', 'rf', 't', 'tr', 'rt']);
const OPS3 = new Set(['**=', '//=', '>>=', '<<=', '...']);
const OPS2 = new Set([
  '**',
  '//',
  '==',
  '!=',
  '<=',
  '>=',
  '<<',
  '>>',
  '->',
  ':=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '@=',
  '&=',
  '|=',
  '^=',
]);
const KEYWORDS = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);
/** A logical line starting with one of these is a compound statement: nothing on it is top-level. */
const COMPOUND = new Set([
  'if',
  'elif',
  'else',
  'for',
  'while',
  'with',
  'def',
  'class',
  'try',
  'except',
  'finally',
  'async',
]);
/** Words that, at column 0 inside an unclosed bracket, mean the bracket was never going to close. */
const RECOVERY_WORDS = new Set(['def', 'class', 'import', 'from', 'async']);
const BINARY_OPS = new Set(['+', '-', '*', '/', '//', '%', '**', '@', '|', '&', '^', '<<', '>>', '~']);
const COMPARISON_OPS = new Set(['<', '>', '==', '!=', '<=', '>=']);

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c > 127;
}

function isIdentChar(c: number): boolean {
  return isIdentStart(c) || (c >= C_0 && c <= C_9);
}

function isDigit(c: number): boolean {
  return c >= C_0 && c <= C_9;
}

function hexValue(text: string): number | undefined {
  return /^[0-9a-fA-F]+$/.test(text) ? Number.parseInt(text, 16) : undefined;
}

const SKIP_RE = /[\n#'"\\()[\]{}]/g;

/** The (lower-cased) string prefix right before the quote at `q`, or ''. */
function prefixBefore(s: string, q: number): string {
  let k = q;
  while (k > q - 3 && k > 0 && isIdentChar(s.charCodeAt(k - 1))) k--;
  if (k === q || (k > 0 && isIdentChar(s.charCodeAt(k - 1)))) return '';
  const prefix = s.slice(k, q).toLowerCase();
  return STRING_PREFIXES.has(prefix) ? prefix : '';
}

/** Splits a Python file into logical lines, collecting tokens only for the lines asked for. */
class Scanner {
  readonly s: string;
  readonly n: number;
  i = 0;
  line = 1;

  constructor(s: string) {
    this.s = s;
    this.n = s.length;
  }

  /** Skips blank and comment-only lines; returns the column of the next statement, or -1 at EOF. */
  nextStatement(): number {
    const { s, n } = this;
    for (;;) {
      const start = this.i;
      let j = start;
      let c = s.charCodeAt(j);
      while (c === C_SP || c === C_TAB || c === C_FF) c = s.charCodeAt(++j);
      if (j >= n) {
        this.i = n;
        return -1;
      }
      if (c === C_NL) {
        this.i = j + 1;
        this.line++;
        continue;
      }
      if (c === C_HASH) {
        const e = s.indexOf('\n', j);
        if (e < 0) {
          this.i = n;
          return -1;
        }
        this.i = e + 1;
        this.line++;
        continue;
      }
      this.i = j;
      return j - start;
    }
  }

  /**
   * Scans one logical line (up to a newline outside brackets). With `collect`, returns its tokens
   * split into `;`-separated statements; otherwise only skips it.
   */
  logicalLine(collect: boolean): Tok[][] {
    const { s, n } = this;
    const stmts: Tok[][] = [];
    let cur: Tok[] = [];
    let depth = 0;
    while (this.i < n) {
      const c = s.charCodeAt(this.i);
      if (c === C_SP || c === C_TAB || c === C_FF) {
        this.i++;
        continue;
      }
      if (c === C_NL) {
        this.i++;
        this.line++;
        if (depth === 0 || this.atRecoveryPoint()) break;
        continue;
      }
      if (c === C_HASH) {
        const e = s.indexOf('\n', this.i);
        this.i = e < 0 ? n : e;
        continue;
      }
      if (c === C_BSL && s.charCodeAt(this.i + 1) === C_NL) {
        this.i += 2;
        this.line++;
        continue;
      }
      if (c === C_QUOTE || c === C_DQUOTE) {
        const t = this.string('', collect);
        if (t !== undefined) cur.push(t);
        continue;
      }
      if (isIdentStart(c)) {
        const start = this.i;
        let j = start + 1;
        while (j < n && isIdentChar(s.charCodeAt(j))) j++;
        const q = s.charCodeAt(j);
        if ((q === C_QUOTE || q === C_DQUOTE) && j - start <= 2) {
          const prefix = s.slice(start, j).toLowerCase();
          if (STRING_PREFIXES.has(prefix)) {
            this.i = j;
            const t = this.string(prefix, collect);
            if (t !== undefined) cur.push(t);
            continue;
          }
        }
        if (collect) cur.push({ k: NAME, v: s.slice(start, j), line: this.line });
        this.i = j;
        continue;
      }
      if (isDigit(c) || (c === C_DOT && isDigit(s.charCodeAt(this.i + 1)))) {
        const start = this.i;
        this.i = this.numberEnd(start);
        if (collect) cur.push({ k: NUM, v: s.slice(start, this.i), line: this.line });
        continue;
      }
      // Punctuation and operators.
      if (c === 40 || c === 91 || c === C_LBRACE) depth++;
      else if ((c === 41 || c === 93 || c === C_RBRACE) && depth > 0) depth--;
      if (!collect) {
        this.i++;
        continue;
      }
      if (c === C_SEMI && depth === 0) {
        stmts.push(cur);
        cur = [];
        this.i++;
        continue;
      }
      let op = s.slice(this.i, this.i + 3);
      if (!OPS3.has(op)) {
        op = op.slice(0, 2);
        if (!OPS2.has(op)) op = op.slice(0, 1);
      }
      cur.push({ k: OP, v: op, line: this.line });
      this.i += op.length;
    }
    if (collect && cur.length > 0) stmts.push(cur);
    return stmts;
  }

  /**
   * Skips one logical line without collecting tokens: jumps from one character that matters
   * (newline, comment, quote, backslash, bracket) to the next.
   */
  skipLogicalLine(): void {
    const { s, n } = this;
    let depth = 0;
    for (;;) {
      SKIP_RE.lastIndex = this.i;
      const m = SKIP_RE.exec(s);
      if (m === null) {
        this.i = n;
        return;
      }
      const j = m.index;
      const c = s.charCodeAt(j);
      if (c === C_NL) {
        this.i = j + 1;
        this.line++;
        if (depth === 0 || this.atRecoveryPoint()) return;
      } else if (c === C_HASH) {
        const e = s.indexOf('\n', j);
        this.i = e < 0 ? n : e;
      } else if (c === C_BSL) {
        if (s.charCodeAt(j + 1) === C_NL) {
          this.i = j + 2;
          this.line++;
        } else {
          this.i = j + 1;
        }
      } else if (c === C_QUOTE || c === C_DQUOTE) {
        this.i = j;
        this.string(prefixBefore(s, j), false);
      } else {
        if (c === 40 || c === 91 || c === C_LBRACE) depth++;
        else if (depth > 0) depth--;
        this.i = j + 1;
      }
    }
  }

  /**
   * At the start of a physical line inside an unclosed bracket: does this line look like a new
   * top-level statement (`def`, `class`, `import`, a decorator, a known metadata assignment)? Then the
   * bracket is a syntax error and scanning resumes here rather than swallowing the rest of the file.
   */
  private atRecoveryPoint(): boolean {
    const { s, n } = this;
    const start = this.i;
    const c = s.charCodeAt(start);
    if (c === C_AT) return isIdentStart(s.charCodeAt(start + 1));
    if (!isIdentStart(c)) return false;
    let j = start + 1;
    while (j < n && isIdentChar(s.charCodeAt(j))) j++;
    const word = s.slice(start, j);
    const next = s.charCodeAt(j);
    if (RECOVERY_WORDS.has(word)) return next === C_SP || next === C_TAB;
    if (word === 'if') return s.startsWith(' __name__', j);
    if (!isKnownMetadataField(word)) return false;
    while (s.charCodeAt(j) === C_SP || s.charCodeAt(j) === C_TAB) j++;
    return s.charCodeAt(j) === C_EQ && s.charCodeAt(j + 1) !== C_EQ;
  }

  private numberEnd(start: number): number {
    const s = this.s;
    let j = start;
    const second = s.charCodeAt(start + 1) | 0x20;
    if (s.charCodeAt(start) === C_0 && (second === 120 || second === 111 || second === 98)) {
      j += 2;
    } else {
      while (isDigit(s.charCodeAt(j)) || s.charCodeAt(j) === 95) j++;
      if (s.charCodeAt(j) === C_DOT) {
        j++;
        while (isDigit(s.charCodeAt(j)) || s.charCodeAt(j) === 95) j++;
      }
      if ((s.charCodeAt(j) | 0x20) === 101) {
        const d = s.charCodeAt(j + 1);
        if (isDigit(d)) j += 1;
        else if ((d === 43 || d === 45) && isDigit(s.charCodeAt(j + 2))) j += 2;
      }
    }
    // Digits, exponent, `j` suffix or stray letters: all part of the token (validated later).
    while (j < this.n && isIdentChar(s.charCodeAt(j))) j++;
    return j;
  }

  /** Scans the string literal whose opening quote is at `this.i` (prefix already consumed). */
  private string(prefix: string, collect: boolean): Tok | undefined {
    const { s, n } = this;
    const line = this.line;
    const q = s.charCodeAt(this.i);
    const triple = s.charCodeAt(this.i + 1) === q && s.charCodeAt(this.i + 2) === q;
    const raw = prefix.includes('r');
    const bytes = prefix.includes('b');
    const fmt = prefix.includes('f') || prefix.includes('t');
    const decode = collect && !fmt && !raw;
    let i = this.i + (triple ? 3 : 1);
    let chunk = i;
    let out = '';
    let err: string | undefined;
    let braces = 0;
    for (;;) {
      if (i >= n) {
        err = `unterminated string starting on line ${line}`;
        break;
      }
      const c = s.charCodeAt(i);
      if (c === C_BSL) {
        if (i + 1 >= n) {
          i = n;
          continue;
        }
        if (s.charCodeAt(i + 1) === C_NL) this.line++;
        if (decode) {
          out += s.slice(chunk, i);
          const [text, len, bad] = decodeEscape(s, i, bytes);
          if (bad !== undefined && err === undefined) err = `${bad} on line ${this.line}`;
          out += text;
          i += len;
          chunk = i;
        } else {
          i += 2;
        }
        continue;
      }
      if (c === C_NL) {
        if (!triple) {
          err = `unterminated string starting on line ${line}`;
          break;
        }
        this.line++;
        i++;
        continue;
      }
      if (fmt) {
        if (c === C_LBRACE) {
          if (braces === 0 && s.charCodeAt(i + 1) === C_LBRACE) i += 2;
          else {
            braces++;
            i++;
          }
          continue;
        }
        if (c === C_RBRACE) {
          if (braces > 0) braces--;
          i++;
          continue;
        }
        if (braces > 0 && (c === C_QUOTE || c === C_DQUOTE)) {
          // A string nested in a replacement field (Python 3.12 allows the same quote).
          this.i = i;
          this.string('', false);
          i = this.i;
          continue;
        }
      }
      if (c === q && (!triple || (s.charCodeAt(i + 1) === q && s.charCodeAt(i + 2) === q))) {
        if (collect) out += s.slice(chunk, i);
        i += triple ? 3 : 1;
        break;
      }
      i++;
    }
    this.i = i;
    if (!collect) return undefined;
    const tok: Tok = { k: STR, v: out, line };
    if (bytes) tok.b = true;
    if (fmt) tok.f = true;
    if (err !== undefined) tok.err = err;
    return tok;
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/** Decodes the escape sequence at `s[i]` (a backslash): [text, length, error]. */
function decodeEscape(s: string, i: number, bytes: boolean): [string, number, string?] {
  const d = s[i + 1] ?? '';
  if (d === '\n') return ['', 2];
  const simple = SIMPLE_ESCAPES[d];
  if (simple !== undefined) return [simple, 2];
  const dc = d.charCodeAt(0);
  if (dc >= C_0 && dc <= C_7) {
    let j = i + 2;
    while (j < i + 4 && s.charCodeAt(j) >= C_0 && s.charCodeAt(j) <= C_7) j++;
    return [String.fromCharCode(Number.parseInt(s.slice(i + 1, j), 8)), j - i];
  }
  const width = d === 'x' ? 2 : bytes ? 0 : d === 'u' ? 4 : d === 'U' ? 8 : 0;
  if (width > 0) {
    const code = hexValue(s.slice(i + 2, i + 2 + width));
    if (code === undefined || s.slice(i + 2, i + 2 + width).length < width) {
      return [`\\${d}`, 2, `truncated \\${d} escape`];
    }
    if (code > 0x10ffff) return [`\\${d}`, 2, `illegal Unicode character \\${d}`];
    return [String.fromCodePoint(code), 2 + width];
  }
  // Unknown escapes (and \N{...}) keep their backslash.
  return [`\\${d}`, d === '' ? 1 : 2];
}

/** Why a value is not a literal (`syntax`: not even valid Python). */
class LitFail {
  readonly syntax: boolean;
  readonly what: string;
  constructor(syntax: boolean, what: string) {
    this.syntax = syntax;
    this.what = what;
  }
}

function describeTok(t: Tok): string {
  if (t.k === STR) return 'a string';
  if (t.k === NUM) return `'${t.v}'`;
  return `'${t.v}'`;
}

const MAX_DEPTH = 500;

/** A module-level name whose last assignment was not a literal: referring to it cannot be folded. */
const NOT_LITERAL = Symbol('not a literal');

/** Module-level constants seen so far, in file order (what a name holds at that point). */
type Constants = Map<string, unknown>;

/**
 * Evaluates a token range the way `ast.literal_eval` would (tuples and sets become arrays), and
 * also folds references to module-level constants assigned a literal earlier in the file
 * (`"enum": ACTIONS`, `{**BASE, "x": 1}`): the file is never run.
 */
class LiteralParser {
  private readonly t: Tok[];
  private i: number;
  private depth = 0;
  private readonly constants: Constants;

  constructor(tokens: Tok[], start: number, constants: Constants = new Map()) {
    this.t = tokens;
    this.i = start;
    this.constants = constants;
  }

  /** The value of a constant named by token `t`, when it holds a literal. */
  private constant(t: Tok | undefined): { value: unknown } | undefined {
    if (t === undefined || t.k !== NAME || !this.constants.has(t.v)) return undefined;
    const value = this.constants.get(t.v);
    return value === NOT_LITERAL ? undefined : { value: structuredClone(value) };
  }

  /** `**NAME` inside a dict: the constant's entries, or why it cannot be read. */
  private spread(into: Record<string, unknown>): void {
    this.i++; // the '**'
    const named = this.t[this.i];
    const found = this.constant(named);
    const dict = found !== undefined && !this.accessedAfter() ? found.value : undefined;
    if (typeof dict !== 'object' || dict === null || Array.isArray(dict))
      throw new LitFail(false, 'a dict unpacking');
    this.i++;
    for (const [key, value] of Object.entries(dict)) setKey(into, key, value);
  }

  /** Whether the name at the cursor is called, indexed or has an attribute read (`X(`, `X[`, `X.`). */
  private accessedAfter(): boolean {
    const next = this.t[this.i + 1];
    return next !== undefined && next.k === OP && (next.v === '(' || next.v === '.' || next.v === '[');
  }

  /** A whole statement value: `1`, `(1, 2)`, or a bare tuple `1, 2`. */
  parseAll(): unknown {
    if (this.i >= this.t.length) throw new LitFail(true, 'missing value');
    const first = this.value();
    let result: unknown = first;
    if (this.peekOp(',')) {
      const items: unknown[] = [first];
      while (this.peekOp(',')) {
        this.i++;
        if (this.i >= this.t.length) break;
        items.push(this.value());
      }
      result = items;
    }
    const rest = this.t[this.i];
    if (rest !== undefined) throw this.unexpected(rest);
    return result;
  }

  private peekOp(op: string): boolean {
    const t = this.t[this.i];
    return t !== undefined && t.k === OP && t.v === op;
  }

  /** What it means to find `t` where a `,`, a closing bracket or the end was expected. */
  private unexpected(t: Tok, open?: Tok): LitFail {
    if (t.k === OP) {
      if (t.v === '(') return new LitFail(false, 'a function call');
      if (t.v === '.') return new LitFail(false, 'an attribute access');
      if (t.v === '[') return new LitFail(false, 'a subscript');
      if (BINARY_OPS.has(t.v)) return new LitFail(false, `a binary operation (\`${t.v}\`)`);
      if (COMPARISON_OPS.has(t.v)) return new LitFail(false, 'a comparison');
      if (t.v === ':=') return new LitFail(false, 'an assignment expression');
      if (t.v === ')' || t.v === ']' || t.v === '}') {
        return new LitFail(
          true,
          open ? `'${open.v}' on line ${open.line} closed by '${t.v}'` : `unmatched '${t.v}'`,
        );
      }
    } else if (t.k === NAME) {
      if (t.v === 'for' || t.v === 'async') return new LitFail(false, 'a comprehension');
      if (t.v === 'if') return new LitFail(false, 'a conditional expression');
      if (t.v === 'and' || t.v === 'or') return new LitFail(false, 'a boolean operation');
      if (t.v === 'in' || t.v === 'is' || t.v === 'not') return new LitFail(false, 'a comparison');
    } else if (t.k === STR && t.f) {
      return new LitFail(false, 'an f-string');
    }
    return new LitFail(true, `unexpected ${describeTok(t)} on line ${t.line}`);
  }

  private neverClosed(open: Tok): LitFail {
    return new LitFail(true, `'${open.v}' opened on line ${open.line} is never closed`);
  }

  private value(): unknown {
    const t = this.t[this.i];
    if (t === undefined) throw new LitFail(true, 'missing value');
    switch (t.k) {
      case STR:
        return this.strings();
      case NUM:
        this.i++;
        return numberValue(t);
      case NAME:
        return this.name(t);
      default:
        break;
    }
    switch (t.v) {
      case '-':
      case '+': {
        const next = this.t[this.i + 1];
        if (next === undefined) throw new LitFail(true, 'missing value');
        if (next.k !== NUM) throw new LitFail(false, 'a unary operation');
        this.i += 2;
        const v = numberValue(next);
        return t.v === '-' ? -v : v;
      }
      case '(':
      case '[':
      case '{':
        return this.nested(t);
      case '*':
      case '**':
        throw new LitFail(false, 'an unpacking');
      case '...':
        throw new LitFail(false, 'Ellipsis');
      case '~':
        throw new LitFail(false, 'a unary operation');
      default:
        throw this.unexpected(t);
    }
  }

  private nested(open: Tok): unknown {
    if (++this.depth > MAX_DEPTH) throw new LitFail(true, `too deeply nested on line ${open.line}`);
    const v = open.v === '(' ? this.parens(open) : open.v === '[' ? this.list(open) : this.braces(open);
    this.depth--;
    return v;
  }

  private strings(): string {
    let out = '';
    let bytes: boolean | undefined;
    for (let t = this.t[this.i]; t !== undefined && t.k === STR; t = this.t[++this.i]) {
      if (t.err !== undefined) throw new LitFail(true, t.err);
      if (t.f) throw new LitFail(false, 'an f-string');
      if (bytes !== undefined && bytes !== (t.b === true)) {
        throw new LitFail(true, `cannot mix bytes and nonbytes literals on line ${t.line}`);
      }
      bytes = t.b === true;
      out += t.v;
    }
    return out;
  }

  private name(t: Tok): unknown {
    const found = this.accessedAfter() ? undefined : this.constant(t);
    if (found) {
      this.i++;
      return found.value;
    }
    this.i++;
    if (t.v === 'True') return true;
    if (t.v === 'False') return false;
    if (t.v === 'None') return null;
    if (t.v === 'lambda') throw new LitFail(false, 'a lambda');
    if (KEYWORDS.has(t.v)) throw new LitFail(false, `a \`${t.v}\` expression`);
    const next = this.t[this.i];
    if (next !== undefined && next.k === NAME && (next.v === 'for' || next.v === 'async')) {
      throw new LitFail(false, 'a comprehension');
    }
    if (next !== undefined && next.k === OP) {
      if (next.v === '(') throw new LitFail(false, 'a function call');
      if (next.v === '.') throw new LitFail(false, 'an attribute access');
      if (next.v === '[') throw new LitFail(false, 'a subscript');
    }
    throw new LitFail(false, `a name (\`${t.v}\`)`);
  }

  /** Items up to the closing bracket, after the opening one; `first` was already parsed. */
  private items(open: Tok, close: string, items: unknown[]): unknown[] {
    for (;;) {
      const t = this.t[this.i];
      if (t === undefined) throw this.neverClosed(open);
      if (t.k === OP && t.v === close) {
        this.i++;
        return items;
      }
      if (t.k !== OP || t.v !== ',') throw this.unexpected(t, open);
      this.i++;
      const u = this.t[this.i];
      if (u === undefined) throw this.neverClosed(open);
      if (u.k === OP && u.v === close) continue;
      items.push(this.value());
    }
  }

  private parens(open: Tok): unknown {
    this.i++;
    const t = this.t[this.i];
    if (t === undefined) throw this.neverClosed(open);
    if (t.k === OP && t.v === ')') {
      this.i++;
      return [];
    }
    const first = this.value();
    const next = this.t[this.i];
    if (next === undefined) throw this.neverClosed(open);
    if (next.k === OP && next.v === ')') {
      this.i++;
      return first;
    }
    return this.items(open, ')', [first]);
  }

  private list(open: Tok): unknown[] {
    this.i++;
    const t = this.t[this.i];
    if (t === undefined) throw this.neverClosed(open);
    if (t.k === OP && t.v === ']') {
      this.i++;
      return [];
    }
    return this.items(open, ']', [this.value()]);
  }

  private braces(open: Tok): unknown {
    this.i++;
    const t = this.t[this.i];
    if (t === undefined) throw this.neverClosed(open);
    if (t.k === OP && t.v === '}') {
      this.i++;
      return {};
    }
    const obj: Record<string, unknown> = {};
    let key: unknown;
    if (t.k === OP && t.v === '**') this.spread(obj);
    else {
      const first = this.value();
      if (!this.peekOp(':')) return this.items(open, '}', [first]); // a set
      key = first;
    }
    for (;;) {
      if (key !== undefined) {
        this.i++; // the ':'
        const v = this.value();
        if (typeof key === 'number') key = String(key);
        if (typeof key !== 'string') throw new LitFail(false, 'a dict key that is not a string or number');
        setKey(obj, key, v);
      }
      const sep = this.t[this.i];
      if (sep === undefined) throw this.neverClosed(open);
      if (sep.k === OP && sep.v === '}') {
        this.i++;
        return obj;
      }
      if (sep.k !== OP || sep.v !== ',') throw this.unexpected(sep, open);
      this.i++;
      const u = this.t[this.i];
      if (u === undefined) throw this.neverClosed(open);
      if (u.k === OP && u.v === '}') {
        this.i++;
        return obj;
      }
      if (u.k === OP && u.v === '**') {
        this.spread(obj);
        key = undefined;
        continue;
      }
      key = this.value();
      const colon = this.t[this.i];
      if (colon === undefined) throw this.neverClosed(open);
      if (colon.k !== OP || colon.v !== ':') throw this.unexpected(colon, open);
    }
  }
}

/** Sets a key, `__proto__` included, as a plain own property. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

const INT_RE = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|[1-9](?:_?\d)*|0(?:_?0)*)$/;
const FLOAT_RE = /^(?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)?$/;

function numberValue(t: Tok): number {
  const text = t.v;
  const last = text.charCodeAt(text.length - 1) | 0x20;
  if (last === 106 && FLOAT_RE.test(text.slice(0, -1))) throw new LitFail(false, 'a complex number');
  if (INT_RE.test(text)) {
    const clean = text.replace(/_/g, '');
    return clean.length > 2 && clean.charCodeAt(1) > 57
      ? Number(`0${clean.slice(1).toLowerCase()}`)
      : Number(clean);
  }
  if (/[.eE]/.test(text) && /\d/.test(text) && FLOAT_RE.test(text)) return Number(text.replace(/_/g, ''));
  throw new LitFail(true, `invalid number '${text}' on line ${t.line}`);
}

function malformed(path: string, line: number, field: string, fail: LitFail): MalformedMetadataError {
  const expected = fail.syntax
    ? `expected a valid Python literal, got a syntax error: ${fail.what}`
    : `expected a literal value (string, number, list, dict, True/False/None), got ${fail.what}`;
  return new MalformedMetadataError(path, line, field, expected);
}

/** Is there a `=` outside brackets from `start` on (a multi-target assignment)? */
function hasTopLevelAssign(tokens: Tok[], start: number): boolean {
  let depth = 0;
  for (let j = start; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.k !== OP) continue;
    if (t.v === '(' || t.v === '[' || t.v === '{') depth++;
    else if (t.v === ')' || t.v === ']' || t.v === '}') depth--;
    else if (t.v === '=' && depth === 0) return true;
  }
  return false;
}

function handleAssignment(tokens: Tok[], path: string, result: ParsedMetadata, constants: Constants): void {
  const target = tokens[0]!;
  const name = target.v;
  if (KEYWORDS.has(name)) return;
  const known = isKnownMetadataField(name);
  let value: unknown;
  try {
    const first = tokens[2];
    if (first !== undefined && first.k === NAME && first.v === 'lambda') throw new LitFail(false, 'a lambda');
    if (hasTopLevelAssign(tokens, 2)) {
      constants.set(name, NOT_LITERAL); // `a = b = 1`: not a single-target assignment
      return;
    }
    value = new LiteralParser(tokens, 2, constants).parseAll();
  } catch (e) {
    if (!(e instanceof LitFail)) throw e;
    constants.set(name, NOT_LITERAL);
    if (known) throw malformed(path, target.line, name, e);
    return;
  }
  constants.set(name, value);
  if (known) {
    const wrong = checkFieldType(name, value, 'python');
    if (wrong !== undefined) throw new MalformedMetadataError(path, target.line, name, wrong);
  }
  assignField(result, name, value, target.line);
}

function docstringOf(tokens: Tok[]): string | undefined {
  const first = tokens[0];
  if (first === undefined || !(first.k === STR || (first.k === OP && first.v === '('))) return undefined;
  let value: unknown;
  try {
    value = new LiteralParser(tokens, 0).parseAll();
  } catch {
    return undefined;
  }
  if (typeof value !== 'string' || tokens.some((t) => t.k === STR && t.b)) return undefined;
  return value.trim();
}

/** String literals (any prefix, triple-quoted first) and comments, blanked before scanning code. */
const STRINGS_AND_COMMENTS =
  /[rRbBuUfF]{0,2}(?:"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|#[^\n]*/g;
const IDENTIFIER = /[A-Za-z_]\w*/g;
/** Forms that bind or change the name that follows or precedes them, anywhere in the file. */
const REBINDS_NEXT = /\b(?:import|as|del|global|nonlocal|def|class)\s+([A-Za-z_]\w*)/g;
const FOR_TARGETS = /\bfor\s+([^:]*?)\s+in\b/g;
const IMPORTED = /^\s*(?:from\s+\S+\s+)?import\s+\(?([^)]*)\)?/;
/** Changed in place: augmented assignment, walrus, a mutating method, an assigned item or attribute. */
const CHANGES_PREVIOUS =
  /\b([A-Za-z_]\w*)\s*(?::=|(?:[-+*/|&^%@]|\/\/|\*\*|>>|<<)=|\.\s*(?:append|extend|insert|remove|pop|popitem|clear|sort|reverse|update|setdefault|add|discard|\w+_update|__\w+__)\b|(?:\[[^\]\n]*\]|\.\s*\w+)\s*(?:(?:[-+*/|&^%@]|\/\/|\*\*|>>|<<)?=(?!=)))/g;
const PLAIN_NAMES = /^[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*,?$/;

interface Statement {
  text: string;
  /** Starts at column 0 (a module-level statement, not inside a block). */
  atModuleLevel: boolean;
}

/**
 * Splits blanked code into logical statements (newlines inside brackets and after a backslash
 * continue a statement; `;` ends one), and each statement's text into its parts at the
 * assignment `=`s outside brackets: `a = b = 1` gives `a`, `b`, `1`.
 */
function statements(code: string): Array<Statement & { parts: string[] }> {
  const out: Array<Statement & { parts: string[] }> = [];
  let depth = 0;
  let start = 0;
  let parts: string[] = [];
  let partStart = 0;
  let atModuleLevel = true;
  const end = (i: number) => {
    const text = code.slice(start, i);
    parts.push(code.slice(partStart, i));
    if (text.trim()) out.push({ text, atModuleLevel, parts });
    parts = [];
    start = partStart = i + 1;
  };
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === '\\' && code[i + 1] === '\n') i++;
    else if (depth === 0 && c === '\n') {
      end(i);
      atModuleLevel = /\S/.test(code[i + 1] ?? '');
    } else if (depth === 0 && c === ';') {
      end(i);
      atModuleLevel = false; // a later statement on one line is not a plain module-level constant
    } else if (
      depth === 0 &&
      c === '=' &&
      code[i + 1] !== '=' &&
      !'=<>!:+-*/%&|^@'.includes(code[i - 1] ?? '')
    ) {
      parts.push(code.slice(partStart, i));
      partStart = i + 1;
    }
  }
  end(code.length);
  return out;
}

/**
 * Module-level names whose value may not be "the literal assigned once", so that referring to
 * them is never folded. The whole file is scanned, blocks and function bodies included, with
 * strings and comments blanked. A name counts as changed when it is
 * - assigned more than once, or assigned anywhere but a plain statement at column 0;
 * - a target beside others (`X, B = …`, `a = X = …`), or an annotated target;
 * - rebound by `import`, `from … import`, `as`, `del`, `global`, `nonlocal`, `def`, `class`,
 *   `for`, or the walrus `:=`;
 * - changed in place (`X += …`, `X[k] = …`, `X.attr = …`, or a mutating method such as
 *   `X.append(…)`; reads such as `X.get(…)` or `x in X` are fine);
 * - aliased (`B = X`), since a change through the alias would change it too.
 * A change through a function the name is passed to (`mutate(X)`) is not seen.
 * Over-counting only means a field that names it is reported as unreadable (DECISIONS 21);
 * folding a name that changes would make metadata disagree with the file.
 */
function changedNames(source: string): Set<string> {
  const code = source.replace(STRINGS_AND_COMMENTS, (m) => m.replace(/[^\n]/g, ' '));
  const assigned = new Map<string, number>();
  const changed = new Set<string>();
  const names = (text: string) => text.match(IDENTIFIER) ?? [];
  for (const [, name] of code.matchAll(REBINDS_NEXT)) changed.add(name!);
  for (const [, name] of code.matchAll(CHANGES_PREVIOUS)) changed.add(name!);
  for (const [, targets] of code.matchAll(FOR_TARGETS)) for (const name of names(targets!)) changed.add(name);
  for (const { text, atModuleLevel, parts } of statements(code)) {
    const imported = IMPORTED.exec(text);
    if (imported) for (const name of names(imported[1]!)) changed.add(name);
    if (parts.length < 2) continue;
    const targets = parts.slice(0, -1);
    const single = targets.length === 1 ? /^\s*([A-Za-z_]\w*)\s*$/.exec(targets[0]!) : null;
    if (single && atModuleLevel) assigned.set(single[1]!, (assigned.get(single[1]!) ?? 0) + 1);
    else for (const target of targets) for (const name of names(target)) changed.add(name);
    // `B = X` or `B = X, Y`: X is reachable under another name, and a change through B changes it.
    const value = parts.at(-1)!.trim();
    if (PLAIN_NAMES.test(value)) for (const name of names(value)) changed.add(name);
  }
  for (const [name, count] of assigned) if (count > 1) changed.add(name);
  return changed;
}

export const parsePythonMetadata: MetadataParser = (text, path) => {
  let s = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
  const result: ParsedMetadata = { fields: {}, lines: {} };
  const constants: Constants = new Map();
  const unsteady = changedNames(s);
  const scanner = new Scanner(s);
  let first = true;
  for (;;) {
    const col = scanner.nextStatement();
    if (col < 0) break;
    if (col > 0) {
      scanner.skipLogicalLine();
      first = false;
      continue;
    }
    const stmts = scanner.logicalLine(true);
    const head = stmts[0]?.[0];
    for (let k = 0; k < stmts.length; k++) {
      const tokens = stmts[k]!;
      if (first && k === 0) {
        const doc = docstringOf(tokens);
        if (doc !== undefined) result.docstring = doc;
      }
      const t0 = tokens[0];
      const t1 = tokens[1];
      if (t0 !== undefined && t0.k === NAME && t1 !== undefined && t1.k === OP && t1.v === '=') {
        handleAssignment(tokens, path, result, constants);
        if (unsteady.has(t0.v)) constants.set(t0.v, NOT_LITERAL);
      }
      if (k === 0 && head !== undefined && head.k === NAME && COMPOUND.has(head.v)) break;
    }
    first = false;
  }
  return result;
};
