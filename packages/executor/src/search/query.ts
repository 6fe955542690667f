/**
 * The search query language (spec interfaces §2.1), a case-insensitive recursive descent:
 *
 *   or      := and ("OR" and)*
 *   and     := not (["AND"] not)*          juxtaposition = AND
 *   not     := "NOT" primary | primary
 *   primary := "(" or ")" | "\"phrase\"" | term
 *
 * Keywords count only when followed by whitespace or the end; an unterminated quote runs to the
 * end; a missing `)` is tolerated; an empty query matches everything.
 */
import type { Glob, TextDoc } from './match.js';
import { compileGlob, globMatches, levenshtein } from './match.js';

export type QueryNode =
  | { type: 'all' }
  | { type: 'term'; term: string; fuzzyMemo?: Map<string, boolean>; fuzzyMemoDistance?: number }
  | { type: 'phrase'; phrase: string }
  | { type: 'wildcard'; pattern: string; glob: Glob }
  | { type: 'and'; children: QueryNode[] }
  | { type: 'or'; children: QueryNode[] }
  | { type: 'not'; child: QueryNode };

const MATCH_ALL: QueryNode = { type: 'all' };
const KEYWORDS = new Set(['AND', 'OR', 'NOT']);

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && /\s/.test(ch);
}

class Parser {
  private pos = 0;

  constructor(private readonly query: string) {}

  parse(): QueryNode {
    if (!this.query.trim()) return MATCH_ALL;
    const parts = [this.parseOr()];
    // A stray ')' must not silently end the query: skip it and keep reading (implicit AND).
    while (this.skipStrayClose()) parts.push(this.parseOr());
    return parts.length === 1 ? parts[0]! : { type: 'and', children: parts };
  }

  /** Skips whitespace and one unmatched ')'; true when more query follows it. */
  private skipStrayClose(): boolean {
    while (this.pos < this.query.length && /\s/.test(this.query[this.pos]!)) this.pos++;
    if (this.query[this.pos] !== ')') return false;
    this.pos++;
    while (this.pos < this.query.length && /\s/.test(this.query[this.pos]!)) this.pos++;
    return this.pos < this.query.length;
  }

  private parseOr(): QueryNode {
    const children = [this.parseAnd()];
    while (this.matchKeyword('OR')) children.push(this.parseAnd());
    return children.length === 1 ? children[0]! : { type: 'or', children };
  }

  private parseAnd(): QueryNode {
    const children = [this.parseNot()];
    for (;;) {
      if (this.matchKeyword('AND') || this.peekNot() || this.peekTerm()) children.push(this.parseNot());
      else break;
    }
    return children.length === 1 ? children[0]! : { type: 'and', children };
  }

  private parseNot(): QueryNode {
    if (this.matchKeyword('NOT')) return { type: 'not', child: this.parsePrimary() };
    return this.parsePrimary();
  }

  private parsePrimary(): QueryNode {
    this.skipSpace();
    if (this.pos >= this.query.length) return MATCH_ALL;
    const ch = this.query[this.pos];
    if (ch === '(') {
      this.pos++;
      const node = this.parseOr();
      this.skipSpace();
      if (this.query[this.pos] === ')') this.pos++;
      return node;
    }
    if (ch === '"') return this.parsePhrase();
    return this.parseTerm();
  }

  private parsePhrase(): QueryNode {
    this.pos++;
    const start = this.pos;
    while (this.pos < this.query.length && this.query[this.pos] !== '"') this.pos++;
    const phrase = this.query.slice(start, this.pos).toLowerCase();
    if (this.pos < this.query.length) this.pos++;
    return { type: 'phrase', phrase };
  }

  private parseTerm(): QueryNode {
    const start = this.pos;
    while (this.pos < this.query.length) {
      const ch = this.query[this.pos]!;
      if (isSpace(ch) || ch === '(' || ch === ')' || ch === '"') break;
      this.pos++;
    }
    const term = this.query.slice(start, this.pos);
    if (!term || KEYWORDS.has(term.toUpperCase())) return MATCH_ALL;
    const lower = term.toLowerCase();
    if (lower.includes('*')) return { type: 'wildcard', pattern: lower, glob: compileGlob(lower) };
    return { type: 'term', term: lower };
  }

  /** Consumes `keyword` (any case) when it is followed by whitespace or the end. */
  private matchKeyword(keyword: string): boolean {
    this.skipSpace();
    const end = this.pos + keyword.length;
    if (this.query.slice(this.pos, end).toUpperCase() !== keyword) return false;
    if (end < this.query.length && !isSpace(this.query[end])) return false;
    this.pos = end;
    return true;
  }

  /** The next whitespace-separated token, upper-cased ('' at the end). */
  private nextToken(): string {
    this.skipSpace();
    let end = this.pos;
    while (end < this.query.length && !isSpace(this.query[end])) end++;
    return this.query.slice(this.pos, end).toUpperCase();
  }

  private peekNot(): boolean {
    return this.nextToken() === 'NOT';
  }

  /** Another operand follows (juxtaposition = AND); `(` starts one too, unlike upstream. */
  private peekTerm(): boolean {
    this.skipSpace();
    const ch = this.query[this.pos];
    if (ch === undefined || ch === ')') return false;
    if (ch === '(') return true;
    const token = this.nextToken();
    return token !== '' && !KEYWORDS.has(token);
  }

  private skipSpace(): void {
    while (this.pos < this.query.length && isSpace(this.query[this.pos])) this.pos++;
  }
}

export function parseQuery(query: string): QueryNode {
  return new Parser(query).parse();
}

function fuzzyMatch(node: Extract<QueryNode, { type: 'term' }>, doc: TextDoc, distance: number): boolean {
  // Vocabularies repeat across items: remember each word's verdict for this query.
  if (node.fuzzyMemoDistance !== distance) {
    node.fuzzyMemo = new Map();
    node.fuzzyMemoDistance = distance;
  }
  const memo = node.fuzzyMemo!;
  const term = node.term;
  for (const word of doc.words) {
    let hit = memo.get(word);
    if (hit === undefined) {
      hit = Math.abs(word.length - term.length) <= distance && levenshtein(term, word, distance) <= distance;
      memo.set(word, hit);
    }
    if (hit) return true;
  }
  return false;
}

/** Evaluates a query against one prepared text; `fuzzy` is the max edit distance (0 = off). */
export function evaluate(node: QueryNode, doc: TextDoc, fuzzy = 0): boolean {
  switch (node.type) {
    case 'all':
      return true;
    case 'term':
      if (doc.lower.includes(node.term)) return true;
      return fuzzy > 0 && fuzzyMatch(node, doc, fuzzy);
    case 'phrase':
      return doc.lower.includes(node.phrase);
    case 'wildcard':
      return globMatches(node.glob, doc);
    case 'and':
      for (const child of node.children) if (!evaluate(child, doc, fuzzy)) return false;
      return true;
    case 'or':
      for (const child of node.children) if (evaluate(child, doc, fuzzy)) return true;
      return false;
    case 'not':
      return !evaluate(node.child, doc, fuzzy);
  }
}

/** Terms for proximity: phrase words, wildcards without `*`, nothing under NOT. */
export function queryTerms(node: QueryNode): string[] {
  switch (node.type) {
    case 'term':
      return [node.term];
    case 'phrase':
      return node.phrase.split(/\s+/).filter(Boolean);
    case 'wildcard':
      return [node.pattern.replaceAll('*', '')];
    case 'and':
    case 'or':
      return node.children.flatMap(queryTerms);
    default:
      return [];
  }
}
