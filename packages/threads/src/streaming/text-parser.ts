/**
 * Tool calls written into a model's text (spec threads §9, `tool_use.mode: text_parsed`; seed 002
 * `StreamingToolParser`). A model without native tool use writes its calls as `<tool_use>`
 * elements, bare `{"type":"tool_use",…}` JSON, or the legacy `<invoke>` form; this parser picks
 * them out of the stream as it arrives, so the runner can dispatch a call while the model is still
 * writing, and passes everything else through as text.
 *
 * It is a character-level state machine that looks at each character once. Text goes out at once
 * except the shortest suffix that could still open a call (`<tool_`, an unclosed `{`); a call's
 * markup is held in parts and joined only when it closes; and a call that grows past
 * `tool_parse_buffer_max` is dropped while the scan skips to its end. Nothing rescans what it has
 * seen, so a stream fed one byte at a time stays linear.
 *
 * Known limits of a one-pass scan: a `<tool_use>` body ends at the first `</tool_use>`, even one
 * inside a JSON string; a call written inside a JSON-looking region (after `{"a": "`) is not seen.
 */
import { clipText } from '@ryeos/lillux';
import type { ToolCall } from '../provider/types.js';
import { isRecord } from '../records.js';

/** `streaming.yaml` `tool_parse_buffer_max` / `text_buffer_max`, in characters. */
export interface TextParserLimits {
  toolParseBufferMax: number;
  textBufferMax: number;
}

export const DEFAULT_TEXT_PARSER_LIMITS: Readonly<TextParserLimits> = {
  toolParseBufferMax: 1_048_576,
  textBufferMax: 10_485_760,
};

export type TextParserEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_complete'; call: ToolCall }
  | { type: 'error'; message: string; call?: UnreadCall };

/**
 * A call the model tried to write but that could not be read: the runner answers it as a failed
 * call, so the model sees what it wrote and why it did not run.
 */
export interface UnreadCall {
  /** The tool it named, when the markup got that far. */
  name?: string;
  /** The start of what it wrote (at most `UNREAD_EXCERPT_MAX` characters). */
  excerpt: string;
}

/** Characters of an unreadable call quoted back to the model: enough to see the mistake. */
const UNREAD_EXCERPT_MAX = 500;
/** A longer "name" is not a tool's: it is neither repeated back to the model nor recorded. */
export const MAX_TOOL_NAME = 128;
/** Characters of a detail (a parse error, a value that is not an object) quoted in an error. */
const DETAIL_MAX = 200;

function unread(text: string, name?: string): UnreadCall {
  const excerpt = text.length > UNREAD_EXCERPT_MAX ? `${clipText(text, UNREAD_EXCERPT_MAX)}…` : text;
  return name && name.length <= MAX_TOOL_NAME ? { name, excerpt } : { excerpt };
}

/** `text` for an error message: whatever the model wrote, the message stays short. */
function quoted(text: string, max: number): string {
  return text.length > max ? `${clipText(text, max)}…` : text;
}

type Markup = 'tool_use' | 'invoke';

interface TagPattern {
  word: string;
  /** `word` must be followed by whitespace, `>` or `/` (so `<tool_user>` is text). */
  delimited: boolean;
  /** `wrapper` tags (`<function_calls>` around legacy calls) are dropped. */
  kind: Markup | 'wrapper';
}

const TAGS: readonly TagPattern[] = [
  { word: '<tool_use', delimited: true, kind: 'tool_use' },
  { word: '<invoke', delimited: true, kind: 'invoke' },
  { word: '<function_calls>', delimited: false, kind: 'wrapper' },
  { word: '</function_calls>', delimited: false, kind: 'wrapper' },
];
const TAG_WORD: Record<Markup, string> = { tool_use: '<tool_use', invoke: '<invoke' };
const CLOSE_TAG: Record<Markup, string> = { tool_use: '</tool_use>', invoke: '</invoke>' };
const TAG_DELIMITERS = ' \t\n\r>/';
const WHITESPACE = ' \t\n\r';
/** Where text may stop being plain: a tag, or a JSON object or array. */
const SPECIAL = /[<{[]/g;
/** Seen in an unterminated JSON candidate: it was a call, not prose. */
const CALL_HINT = /"type"\s*:\s*"tool_use"/;

/** Where the opening tag's attribute syntax is; anything else means it was not a tag after all. */
type AttrState = 'space' | 'name' | 'afterName' | 'beforeValue' | 'quoted' | 'unquoted' | 'slash';
const ATTR_NAME = /[\w:.-]/;
const UNQUOTED_VALUE = /[^\s"'<>=`]/;

type Mode =
  | { kind: 'text' }
  | { kind: 'tag'; pending: string }
  | { kind: 'open'; markup: Markup; attr: AttrState; quote: string }
  | { kind: 'body'; markup: Markup; openTag: string; matched: number }
  | { kind: 'json'; scanner: JsonScanner };

const TEXT: Mode = { kind: 'text' };

type ScanState =
  | 'value'
  | 'valueOrClose'
  | 'key'
  | 'keyOrClose'
  | 'colon'
  | 'commaOrClose'
  | 'string'
  | 'bare';
type ScanResult = 'more' | 'done' | 'reject';

const ESCAPES = '"\\/bfnrt';
const BARE_START = /[-0-9tfn]/;
const BARE = /[-+.0-9A-Za-z]/;
const HEX = /[0-9A-Fa-f]/;

/**
 * Decides, a character at a time, whether text from a `{` or `[` can still be JSON and when it
 * closes. Strings and escapes are tracked, so a `}` inside a string does not close; numbers and
 * literals are only delimited here (`JSON.parse` judges them at the end). A top-level array may
 * hold only objects, the one array that can be a list of calls, so `[1]` or `[a link](…)` is
 * rejected at once and streams on as text.
 */
class JsonScanner {
  /** Open containers, innermost last: true for an array. */
  private readonly stack: boolean[];
  private state: ScanState;
  private stringIsKey = false;
  /** 0: none; -1: after a backslash; 1–4: hex digits of a `\u` escape still due. */
  private escape = 0;

  constructor(open: string) {
    this.stack = [open === '['];
    this.state = open === '[' ? 'valueOrClose' : 'keyOrClose';
  }

  step(c: string): ScanResult {
    if (this.state === 'string') return this.inString(c);
    if (this.state === 'bare') {
      if (BARE.test(c)) return 'more';
      this.state = 'commaOrClose';
    }
    if (WHITESPACE.includes(c)) return 'more';
    switch (this.state) {
      case 'colon':
        if (c !== ':') return 'reject';
        this.state = 'value';
        return 'more';
      case 'commaOrClose':
        if (c === ',') {
          this.state = this.inArray() ? 'value' : 'key';
          return 'more';
        }
        return c === (this.inArray() ? ']' : '}') ? this.close() : 'reject';
      case 'key':
      case 'keyOrClose':
        if (c === '"') return this.openString(true);
        return c === '}' && this.state === 'keyOrClose' ? this.close() : 'reject';
      default:
        if (c === ']' && this.state === 'valueOrClose') return this.close();
        return this.value(c);
    }
  }

  private value(c: string): ScanResult {
    if (this.stack.length === 1 && this.inArray() && c !== '{') return 'reject';
    if (c === '{' || c === '[') {
      this.stack.push(c === '[');
      this.state = c === '[' ? 'valueOrClose' : 'keyOrClose';
      return 'more';
    }
    if (c === '"') return this.openString(false);
    if (!BARE_START.test(c)) return 'reject';
    this.state = 'bare';
    return 'more';
  }

  private inString(c: string): ScanResult {
    if (this.escape === -1) {
      if (c === 'u') this.escape = 4;
      else if (ESCAPES.includes(c)) this.escape = 0;
      else return 'reject';
      return 'more';
    }
    if (this.escape > 0) {
      if (!HEX.test(c)) return 'reject';
      this.escape--;
      return 'more';
    }
    if (c === '"') {
      if (!this.stringIsKey) return this.afterValue();
      this.state = 'colon';
      return 'more';
    }
    if (c === '\\') this.escape = -1;
    return c < ' ' ? 'reject' : 'more';
  }

  private openString(isKey: boolean): ScanResult {
    this.stringIsKey = isKey;
    this.state = 'string';
    return 'more';
  }

  private close(): ScanResult {
    this.stack.pop();
    return this.afterValue();
  }

  private afterValue(): ScanResult {
    if (this.stack.length === 0) return 'done';
    this.state = 'commaOrClose';
    return 'more';
  }

  private inArray(): boolean {
    return this.stack[this.stack.length - 1] === true;
  }
}

/** Does `pending` + `c` open one of TAGS (`partial`: cannot tell yet)? */
function matchTag(pending: string, c: string): TagPattern | 'partial' | undefined {
  const next = pending + c;
  let partial = false;
  for (const tag of TAGS) {
    if (tag.delimited) {
      if (pending === tag.word && TAG_DELIMITERS.includes(c)) return tag;
    } else if (next === tag.word) {
      return tag;
    }
    if (tag.word.startsWith(next)) partial = true;
  }
  return partial ? 'partial' : undefined;
}

/** The next attribute-syntax state after `c`, or undefined when `c` cannot be there. */
function nextAttrState(state: AttrState, c: string): AttrState | 'end' | undefined {
  const space = WHITESPACE.includes(c);
  switch (state) {
    case 'space':
      if (space) return 'space';
      if (c === '>') return 'end';
      if (c === '/') return 'slash';
      return ATTR_NAME.test(c) ? 'name' : undefined;
    case 'name':
      if (c === '=') return 'beforeValue';
      if (space) return 'afterName';
      return ATTR_NAME.test(c) ? 'name' : undefined;
    case 'afterName':
      if (c === '=') return 'beforeValue';
      return space ? 'afterName' : undefined;
    case 'beforeValue':
      if (space) return 'beforeValue';
      if (c === '"' || c === "'") return 'quoted';
      return UNQUOTED_VALUE.test(c) ? 'unquoted' : undefined;
    case 'unquoted':
      if (space) return 'space';
      if (c === '>') return 'end';
      return UNQUOTED_VALUE.test(c) || c === '/' ? 'unquoted' : undefined;
    case 'slash':
      return c === '>' ? 'end' : undefined;
    default:
      return undefined; // 'quoted' is handled by the caller, which knows the quote
  }
}

const ATTRIBUTE = /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/g;

/** Attributes of an opening tag (the text after the tag's name). */
function parseAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const match of text.matchAll(ATTRIBUTE)) {
    attrs.set(match[1]!, match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attrs;
}

/** A parameter's opening tag, matched only where it starts (sticky), so it never scans ahead. */
const PARAMETER_OPEN = /<parameter\s+name\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)')\s*>/y;
const PARAMETER_CLOSE = '</parameter>';

/** Characters a parse looked through: a caller can check the work grows with the body, no faster. */
export interface ScanWork {
  scanned: number;
}

/** `body.indexOf(needle, from)`, adding the characters it looked through to `work`. */
function find(body: string, needle: string, from: number, work?: ScanWork): number {
  const at = body.indexOf(needle, from);
  if (work) work.scanned += (at === -1 ? body.length : at + needle.length) - from;
  return at;
}

/**
 * Legacy `<parameter name="k">v</parameter>` values: JSON when they parse, else the raw text. One
 * forward pass: every search starts where the last one ended, and a parameter left unclosed ends
 * the scan, since no later one can close either (a regex with a lazy body rescanned the rest of
 * the body from every `<parameter`, quadratic on a body of unclosed ones).
 */
export function parseParameters(body: string, work?: ScanWork): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (let at = find(body, '<parameter', 0, work); at !== -1; ) {
    PARAMETER_OPEN.lastIndex = at;
    const open = PARAMETER_OPEN.exec(body);
    if (!open) {
      at = find(body, '<parameter', at + 1, work);
      continue;
    }
    const valueStart = at + open[0].length;
    const closeAt = find(body, PARAMETER_CLOSE, valueStart, work);
    if (closeAt === -1) break;
    const raw = body.slice(valueStart, closeAt);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // not JSON: the raw text is the value
    }
    input[open[1] ?? open[2] ?? ''] = value;
    at = find(body, '<parameter', closeAt + PARAMETER_CLOSE.length, work);
  }
  return input;
}

function isToolUse(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && value['type'] === 'tool_use';
}

/** A `<tool_use>` body → its input, or why it is not one. Empty means no arguments. */
function parseBody(body: string): Record<string, unknown> | string {
  const text = body.trim();
  if (text === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) return value;
    return `got ${Array.isArray(value) ? 'an array' : quoted(JSON.stringify(value), DETAIL_MAX)}`;
  } catch (error) {
    return quoted(error instanceof Error ? error.message : String(error), DETAIL_MAX);
  }
}

/** The `name` attribute of a (possibly unfinished) opening tag, if it is there whole. */
function nameAttribute(markup: Markup, written: string): string | undefined {
  const end = written.indexOf('>');
  if (end < 0) return undefined;
  return parseAttributes(written.slice(TAG_WORD[markup].length, end)).get('name') || undefined;
}

/** The `"name"` of an unfinished JSON call, if it is there whole. */
function jsonName(written: string): string | undefined {
  return /"name"\s*:\s*"([^"\\]{1,200})"/.exec(written)?.[1];
}

export class TextToolParser {
  private readonly limits: TextParserLimits;
  private mode: Mode = TEXT;
  private out: TextParserEvent[] = [];
  /** The current call candidate's markup (while not discarding), and its whole length. */
  private held: string[] = [];
  private heldLength = 0;
  /** The candidate overflowed: it is being skipped to its end without being kept. */
  private discarding = false;
  private textParts: string[] = [];
  private textLength = 0;
  private textFull = false;
  private generatedIds = 0;

  constructor(limits?: Partial<TextParserLimits>) {
    this.limits = {
      toolParseBufferMax: limits?.toolParseBufferMax ?? DEFAULT_TEXT_PARSER_LIMITS.toolParseBufferMax,
      textBufferMax: limits?.textBufferMax ?? DEFAULT_TEXT_PARSER_LIMITS.textBufferMax,
    };
  }

  /** Takes the next piece of the stream, split anywhere; returns what it settled. */
  feed(chunk: string): TextParserEvent[] {
    this.out = [];
    this.consume(chunk);
    const holding = this.mode.kind === 'open' || this.mode.kind === 'body' || this.mode.kind === 'json';
    if (holding && !this.discarding && this.heldLength > this.limits.toolParseBufferMax) {
      // Prose that merely opened a brace (`Here: {"` and a long answer) is text, not a call:
      // give it back rather than drop it. Only what looks like a call is discarded.
      const held = this.held.join('');
      if (this.mode.kind === 'json' && !CALL_HINT.test(held)) {
        this.held = [];
        this.heldLength = 0;
        this.mode = TEXT;
        this.emitText(held);
      } else {
        this.overflow();
      }
    }
    return this.out;
  }

  /**
   * The stream ended: a held tag prefix or non-call JSON goes out as text; an unterminated call
   * is an error and its markup is dropped. The parser is then back at plain text.
   */
  end(): TextParserEvent[] {
    this.out = [];
    const mode = this.mode;
    this.mode = TEXT;
    if (mode.kind === 'tag') {
      this.emitText(mode.pending);
    } else if (mode.kind === 'json') {
      const text = this.release();
      if (text !== undefined && CALL_HINT.test(text))
        this.error('unterminated JSON tool call at end of stream', unread(text, jsonName(text)));
      else if (text !== undefined) this.emitText(text);
    } else if (mode.kind !== 'text') {
      if (!this.discarding) {
        const written = (mode.kind === 'body' ? mode.openTag : '') + this.held.join('');
        this.error(
          `unterminated <${mode.markup}> call at end of stream`,
          unread(written, nameAttribute(mode.markup, written)),
        );
      }
      this.held = [];
    }
    return this.out;
  }

  /** Every character emitted as `text` so far, up to `textBufferMax`. */
  fullText(): string {
    if (this.textParts.length > 1) this.textParts = [this.textParts.join('')];
    return this.textParts[0] ?? '';
  }

  private consume(chunk: string): void {
    let i = 0;
    while (i < chunk.length) i = this.step(chunk, i);
  }

  /** Handles what it can of `chunk` from `i` in the current mode; returns where it stopped. */
  private step(chunk: string, i: number): number {
    const mode = this.mode;
    switch (mode.kind) {
      case 'text':
        return this.scanText(chunk, i);
      case 'tag':
        return this.scanTag(chunk, i, mode);
      case 'open':
        return this.scanOpenTag(chunk, i, mode);
      case 'body':
        return this.scanBody(chunk, i, mode);
      case 'json':
        return this.scanJson(chunk, i, mode);
    }
  }

  private scanText(chunk: string, i: number): number {
    SPECIAL.lastIndex = i;
    const found = SPECIAL.exec(chunk);
    const at = found ? found.index : chunk.length;
    this.emitText(chunk.slice(i, at));
    if (!found) return at;
    const c = chunk.charAt(at);
    if (c === '<') {
      this.mode = { kind: 'tag', pending: c };
    } else {
      this.hold(c);
      this.mode = { kind: 'json', scanner: new JsonScanner(c) };
    }
    return at + 1;
  }

  private scanTag(chunk: string, i: number, mode: Extract<Mode, { kind: 'tag' }>): number {
    const c = chunk.charAt(i);
    const tag = matchTag(mode.pending, c);
    if (tag === 'partial') {
      mode.pending += c;
      return i + 1;
    }
    this.mode = TEXT;
    if (tag === undefined) {
      // Not a tag: the `<` is text, and what followed it is looked at again (it may open one).
      this.emitText('<');
      this.consume(mode.pending.slice(1));
      return i;
    }
    if (tag.kind === 'wrapper') return i + 1;
    this.hold(mode.pending);
    this.mode = { kind: 'open', markup: tag.kind, attr: 'space', quote: '' };
    return i; // the delimiter belongs to the opening tag
  }

  private scanOpenTag(chunk: string, i: number, mode: Extract<Mode, { kind: 'open' }>): number {
    for (let j = i; j < chunk.length; j++) {
      const c = chunk.charAt(j);
      if (mode.attr === 'quoted') {
        if (c === mode.quote) mode.attr = 'space';
        else if (c === '<') return this.rejectHeld(chunk, i, j);
        continue;
      }
      const next = nextAttrState(mode.attr, c);
      if (next === undefined) return this.rejectHeld(chunk, i, j);
      if (next === 'end') return this.endOpenTag(chunk, i, j + 1, mode);
      if (next === 'quoted') mode.quote = c;
      mode.attr = next;
    }
    this.keep(chunk.slice(i));
    return chunk.length;
  }

  private endOpenTag(chunk: string, i: number, end: number, mode: Extract<Mode, { kind: 'open' }>): number {
    this.keep(chunk.slice(i, end));
    if (mode.attr === 'slash') {
      const markup = this.release();
      this.mode = TEXT;
      if (markup !== undefined) this.finishElement(mode.markup, markup, '');
      return end;
    }
    const openTag = this.held.join('');
    this.held = [];
    this.mode = { kind: 'body', markup: mode.markup, openTag, matched: 0 };
    return end;
  }

  private scanBody(chunk: string, i: number, mode: Extract<Mode, { kind: 'body' }>): number {
    const close = CLOSE_TAG[mode.markup];
    let j = i;
    while (j < chunk.length) {
      if (mode.matched === 0) {
        j = chunk.indexOf('<', j);
        if (j < 0) break;
      }
      const c = chunk.charAt(j);
      // `<` opens the closing tag only at its start, so a mismatch restarts at 0 or 1.
      if (c === close.charAt(mode.matched)) mode.matched++;
      else mode.matched = c === '<' ? 1 : 0;
      j++;
      if (mode.matched === close.length) {
        this.keep(chunk.slice(i, j));
        const body = this.release();
        this.mode = TEXT;
        if (body !== undefined) this.finishElement(mode.markup, mode.openTag, body.slice(0, -close.length));
        return j;
      }
    }
    this.keep(chunk.slice(i));
    return chunk.length;
  }

  private scanJson(chunk: string, i: number, mode: Extract<Mode, { kind: 'json' }>): number {
    for (let j = i; j < chunk.length; j++) {
      const result = mode.scanner.step(chunk.charAt(j));
      if (result === 'more') continue;
      if (result === 'reject') return this.rejectHeld(chunk, i, j);
      this.keep(chunk.slice(i, j + 1));
      const text = this.release();
      this.mode = TEXT;
      if (text !== undefined) this.finishJson(text);
      return j + 1;
    }
    this.keep(chunk.slice(i));
    return chunk.length;
  }

  /** The candidate cannot be a call: it is text, and scanning resumes at `at`. */
  private rejectHeld(chunk: string, i: number, at: number): number {
    this.keep(chunk.slice(i, at));
    const text = this.release();
    this.mode = TEXT;
    if (text !== undefined) this.emitText(text);
    return at;
  }

  private finishElement(markup: Markup, openTag: string, body: string): void {
    const attrs = parseAttributes(openTag.slice(TAG_WORD[markup].length));
    const name = attrs.get('name');
    const written = `${openTag}${body}${CLOSE_TAG[markup]}`;
    if (!name) {
      this.error(`<${markup}> call without a name attribute`, unread(written));
      return;
    }
    const input = markup === 'invoke' ? parseParameters(body) : parseBody(body);
    if (typeof input === 'string') {
      this.error(
        `<tool_use name="${quoted(name, MAX_TOOL_NAME)}"> body is not a JSON object: ${input}`,
        unread(written, name),
      );
      return;
    }
    this.complete(attrs.get('id'), name, input);
  }

  /** A closed JSON value: a call, an array of calls, or (anything else) text. */
  private finishJson(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.emitText(text);
      return;
    }
    const items: unknown[] = Array.isArray(value) ? value : [value];
    if (items.length === 0 || !items.every(isToolUse)) {
      this.emitText(text);
      return;
    }
    for (const item of items) this.jsonCall(item);
  }

  private jsonCall(item: Record<string, unknown>): void {
    const { id, name, input } = item;
    if (typeof name !== 'string' || name === '') {
      this.error('JSON tool_use object without a string "name"', unread(JSON.stringify(item)));
    } else if (!isRecord(input)) {
      this.error(
        `JSON tool_use "${quoted(name, MAX_TOOL_NAME)}" without an object "input"`,
        unread(JSON.stringify(item), name),
      );
    } else {
      this.complete(typeof id === 'string' ? id : undefined, name, input);
    }
  }

  private complete(id: string | undefined, name: string, input: Record<string, unknown>): void {
    const callId = id || `textcall_${++this.generatedIds}`;
    this.out.push({ type: 'tool_complete', call: { id: callId, name, input } });
  }

  private hold(initial: string): void {
    this.held = [initial];
    this.heldLength = initial.length;
    this.discarding = false;
  }

  private keep(part: string): void {
    this.heldLength += part.length;
    if (!this.discarding && part !== '') this.held.push(part);
  }

  /** The held markup, or undefined when it overflowed (reported once) and was dropped. */
  private release(): string | undefined {
    if (!this.discarding && this.heldLength > this.limits.toolParseBufferMax) this.overflow();
    const text = this.discarding ? undefined : this.held.join('');
    this.held = [];
    this.discarding = false;
    return text;
  }

  private overflow(): void {
    const written = this.held.join('');
    const openTag = this.mode.kind === 'body' ? this.mode.openTag : '';
    const markup = this.mode.kind === 'body' || this.mode.kind === 'open' ? this.mode.markup : undefined;
    this.discarding = true;
    this.held = [];
    // Cut at the limit: where the overflow is noticed depends on how the stream was chunked.
    const start = clipText(openTag + written, this.limits.toolParseBufferMax);
    this.error(
      `tool call over tool_parse_buffer_max (${this.limits.toolParseBufferMax} characters): discarded`,
      unread(start, markup ? nameAttribute(markup, start) : jsonName(start)),
    );
  }

  private error(message: string, call?: UnreadCall): void {
    this.out.push(call ? { type: 'error', message, call } : { type: 'error', message });
  }

  /** Text goes out as an event; fullText keeps it up to `textBufferMax`, then reports once. */
  private emitText(text: string): void {
    if (text === '') return;
    if (this.textFull) {
      this.pushText(text);
      return;
    }
    const room = this.limits.textBufferMax - this.textLength;
    if (text.length <= room) {
      this.record(text);
      return;
    }
    const kept = clipText(text, room);
    this.record(kept);
    this.textFull = true;
    this.error(`text over text_buffer_max (${this.limits.textBufferMax} characters): fullText() stops there`);
    this.pushText(text.slice(kept.length));
  }

  private record(text: string): void {
    if (text === '') return;
    this.textParts.push(text);
    this.textLength += text.length;
    this.pushText(text);
  }

  private pushText(text: string): void {
    const last = this.out[this.out.length - 1];
    if (last?.type === 'text') last.text += text;
    else this.out.push({ type: 'text', text });
  }
}
