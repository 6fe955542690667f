/**
 * Cutting text to a length without breaking it: JavaScript strings count UTF-16 units, and a cut
 * between the two halves of a surrogate pair leaves a lone surrogate that strict JSON consumers
 * (a model provider's API, for one) reject outright.
 */

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would fall inside a surrogate
 * pair; `text` itself when it is no longer than `max`.
 */
export function clipText(text: string, max: number): string {
  const limit = Math.max(0, Math.floor(max));
  if (text.length <= limit) return text;
  const end = limit > 0 && isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit;
  return text.slice(0, end);
}
