/** A JSON object: not null, not an array (metadata, schemas and their rules are read this way). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
