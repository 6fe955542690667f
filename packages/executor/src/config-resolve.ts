/**
 * CONFIG_RESOLVE (spec items §4.4): config files under `.ai/config/` handed to the tool as
 * `resolved_config`. `deep_merge` (default) layers system → user → project; `first_match` takes
 * the highest space that has the file. Unsigned config files are allowed; tampered or untrusted
 * ones are refused, like any item.
 */
import { extname } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { ItemContext } from './context.js';
import { parseYamlDocument } from './parsers/yaml.js';
import { normalizeId } from './refs.js';
import type { Space } from './spaces.js';
import { findItem, readVerifiedItem } from './verified-read.js';

interface ResolveSpec {
  path: string;
  mode?: 'deep_merge' | 'first_match';
}

function specsOf(value: unknown): ResolveSpec[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry) => {
    const spec = typeof entry === 'string' ? { path: entry } : (entry as Partial<ResolveSpec> | null);
    if (!spec || typeof spec.path !== 'string' || !spec.path) {
      throw new RyeError(
        'VALIDATION',
        'CONFIG_RESOLVE entries need a path under .ai/config/, e.g. {path: "agent/settings.yaml"}',
        {
          hint: "Fix the tool's CONFIG_RESOLVE and re-sign it.",
        },
      );
    }
    if (spec.mode !== undefined && spec.mode !== 'deep_merge' && spec.mode !== 'first_match') {
      throw new RyeError(
        'VALIDATION',
        `Unknown CONFIG_RESOLVE mode '${String(spec.mode)}': use deep_merge or first_match`,
      );
    }
    return { path: spec.path, mode: spec.mode ?? 'deep_merge' };
  });
}

/** Recursive merge of mappings; other values (and lists) are replaced; `extends` is ignored. */
export function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (key === 'extends') continue;
    const current = out[key];
    const bothMaps =
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      current &&
      typeof current === 'object' &&
      !Array.isArray(current);
    out[key] = bothMaps
      ? deepMerge(current as Record<string, unknown>, value as Record<string, unknown>)
      : value;
  }
  return out;
}

async function readConfig(
  context: ItemContext,
  space: Space,
  id: string,
  extension: string,
): Promise<Record<string, unknown> | undefined> {
  const where = { within: space, extensions: [extension] };
  if (!(await findItem(context, 'config', id, where))) return undefined;
  // Config may be unsigned; anything else (modified, untrusted, bad signature) is refused.
  const { item, text } = await readVerifiedItem(context, 'config', id, { ...where, allowUnsigned: true });
  return parseYamlDocument(text, item.path);
}

/** The `resolved_config` value for a tool's CONFIG_RESOLVE (object keyed by path for a list). */
export async function resolveToolConfig(context: ItemContext, value: unknown): Promise<unknown> {
  const specs = specsOf(value);
  const results: Record<string, unknown> = {};
  for (const spec of specs) {
    const extension = extname(spec.path) || '.yaml';
    const id = normalizeId(extname(spec.path) ? spec.path.slice(0, -extension.length) : spec.path);
    const spaces = context.spaces.ordered();
    let resolved: Record<string, unknown> = {};
    if (spec.mode === 'first_match') {
      for (const space of spaces) {
        const found = await readConfig(context, space, id, extension);
        if (found) {
          resolved = found;
          break;
        }
      }
    } else {
      for (const space of [...spaces].reverse()) {
        const found = await readConfig(context, space, id, extension);
        if (found) resolved = deepMerge(resolved, found);
      }
    }
    results[spec.path] = resolved;
  }
  return Array.isArray(value) ? results : results[specs[0]!.path];
}
