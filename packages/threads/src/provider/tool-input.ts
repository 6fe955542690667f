/**
 * A tool call's arguments as the model wrote them (JSON text) → an object. Empty means no
 * arguments; anything that is not a JSON object is kept as `{_raw}` so the runner can report it
 * to the model instead of losing it (spec threads §8.3).
 */
export function parseToolInput(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // fall through: kept raw
  }
  return { _raw: text };
}

/** Drops keys whose value is `undefined`, so a body never carries them (spec threads §8.1). */
export function definedOnly(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (value !== undefined) out[key] = value;
  return out;
}
