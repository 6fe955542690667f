/**
 * Model and tool text is shown to a person, never obeyed by their terminal. A terminal acts on C0
 * controls (ESC starts sequences that move the cursor, rewrite lines already printed or set the
 * window title), on DEL and on C1 controls (U+009B is a one-character CSI), and the bidirectional
 * overrides reorder what is displayed. Each such character is printed as its `\uXXXX` escape.
 */

/** Controls and overrides in multi-line text: newline and tab are kept, everything else escaped. */
const UNPRINTABLE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * What `JSON.stringify` leaves raw: it escapes C0 itself but not DEL, C1 or the overrides. In JSON
 * text they can only stand inside strings, where `\uXXXX` is the same character to a parser.
 */
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

function asEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Text for a person (a transcript line, a tool's output): controls shown as escapes. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE_TEXT, asEscape);
}

/** JSON text that is still the same JSON to a parser, and inert on a terminal. */
export function printableJson(json: string): string {
  return json.replace(UNPRINTABLE_IN_JSON, asEscape);
}
