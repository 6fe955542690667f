/** A JSON object as YAML, JSON or a caller gives it: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` when it is such an object, else an empty one (a missing or malformed config section). */
export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
