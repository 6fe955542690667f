/**
 * The merge rule of every `.ai/config/agent/*.yaml` (spec threads §5.2): the documents of the
 * system bundles, then user space, then the project, each later one winning:
 * - mappings deep-merge;
 * - a list whose first item is a mapping with an `id` merges by id: an item whose id is already
 *   there replaces it in place, a new id is appended (so a project can override one builtin hook);
 * - any other list, and every scalar, replaces;
 * - the top-level `extends` key is ignored (the loader, not the document, decides the layers).
 * Pure: the inputs are never modified and the result shares no objects with them.
 */
import { isRecord } from '../records.js';

type Json = unknown;

/** Sets an own property, so a YAML key named `__proto__` stays data and never becomes a prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function clone(value: Json): Json {
  if (Array.isArray(value)) return value.map(clone);
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, clone(v));
    return out;
  }
  return value;
}

function idOf(item: unknown): unknown {
  return isRecord(item) && Object.hasOwn(item, 'id') ? item.id : undefined;
}

function mergeById(base: readonly unknown[], over: readonly unknown[]): unknown[] {
  const merged = base.map(clone);
  for (const item of over) {
    const id = idOf(item);
    const at = id === undefined ? -1 : merged.findIndex((existing) => idOf(existing) === id);
    if (at >= 0) merged[at] = clone(item);
    else merged.push(clone(item));
  }
  return merged;
}

function mergeValue(base: Json, over: Json): Json {
  if (isRecord(base) && isRecord(over)) {
    const out = clone(base) as Record<string, unknown>;
    for (const [k, v] of Object.entries(over)) {
      setOwn(out, k, Object.hasOwn(out, k) ? mergeValue(out[k], v) : clone(v));
    }
    return out;
  }
  if (Array.isArray(base) && Array.isArray(over) && idOf(over[0]) !== undefined) {
    return mergeById(base, over);
  }
  return clone(over);
}

/**
 * Merges config documents in load order (system bundles → user → project). Layers that are not
 * mappings (an empty file parses to `null`) contribute nothing.
 */
export function mergeAgentConfig(layers: readonly unknown[]): Record<string, unknown> {
  let merged: Record<string, unknown> = {};
  for (const layer of layers) {
    if (!isRecord(layer)) continue;
    const { extends: _ignored, ...rest } = layer;
    merged = mergeValue(merged, rest) as Record<string, unknown>;
  }
  return merged;
}
