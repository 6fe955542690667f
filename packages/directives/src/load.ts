/**
 * Loading directives and knowledge through the executor: resolve in the spaces, verify the
 * signature (integrity errors win over parse errors), then parse.
 */
import type {
  DeclaredIdentity,
  ItemContext,
  ItemVerification,
  ResolvedItem,
  SearchableFields,
  SpaceName,
} from '@ryeos/executor';
import { readerNamespace, readVerifiedItem } from '@ryeos/executor';
import { isRyeError, normalizeNewlines, RyeError } from '@ryeos/lillux';
import type { ParsedDirective } from './directive.js';
import { parseDirective } from './directive.js';
import { READERS_ID } from './facts.js';
import type { ParsedKnowledge } from './knowledge.js';
import { parseKnowledge } from './knowledge.js';

export interface Loaded<T> {
  id: string;
  item: ResolvedItem;
  parsed: T;
  verification: ItemVerification;
}

export interface LoadOptions {
  from?: SpaceName;
  only?: SpaceName;
}

async function load<T>(
  executor: ItemContext,
  kind: 'directive' | 'knowledge',
  id: string,
  /** `text` with normalized newlines; `raw` as read (what a bundle index knows by hash). */
  parse: (text: string, path: string, raw: string) => T,
  declaredOf: (parsed: T) => DeclaredIdentity,
  options: LoadOptions,
): Promise<Loaded<T>> {
  // One read: the text that is parsed is the text that is verified (no swap in between).
  // Parsing first only tells the moved check what the item declares; a parse failure is
  // reported after integrity, which names the more fundamental problem.
  let parsed: T | undefined;
  let parseError: unknown;
  const { item, verification } = await readVerifiedItem(executor, kind, id, {
    ...options,
    declare: (text, found) => {
      try {
        parsed = parse(normalizeNewlines(text), found.path, text);
        return declaredOf(parsed);
      } catch (error) {
        parseError = error;
        return undefined;
      }
    },
  });
  if (parsed === undefined)
    throw isRyeError(parseError) ? parseError : new RyeError('VALIDATION', `Cannot parse ${item.path}`);
  return { id: item.id, item, parsed, verification };
}

export function loadDirective(
  executor: ItemContext,
  id: string,
  options: LoadOptions = {},
): Promise<Loaded<ParsedDirective>> {
  return load(
    executor,
    'directive',
    id,
    parseDirective,
    (d) => ({ name: d.name, category: d.category }),
    options,
  );
}

export function loadKnowledge(
  executor: ItemContext,
  id: string,
  options: LoadOptions = {},
): Promise<Loaded<ParsedKnowledge>> {
  // Only what the file declares is checked: a knowledge item without a name takes its stem.
  const declared = (k: ParsedKnowledge) => ({
    name: typeof k.fields.name === 'string' ? k.fields.name : undefined,
    category: k.category,
  });
  return load(
    executor,
    'knowledge',
    id,
    (text, path, raw) => parseKnowledge(text, path, id, indexedFields(executor, path, raw)),
    declared,
    options,
  );
}

/**
 * A system item's metadata as its bundle's signed index holds it (the knowledge reader's search
 * fields keep every field as written), for exactly these bytes: loading it then needs no YAML
 * parser. Undefined for any other item, which is parsed.
 */
function indexedFields(
  executor: ItemContext,
  path: string,
  raw: string,
): Record<string, unknown> | undefined {
  const known = executor.cache.precomputed<SearchableFields>(
    readerNamespace('knowledge', READERS_ID),
    path,
    raw,
  );
  const fields = known?.metadata;
  return fields && typeof fields === 'object' && !Array.isArray(fields) ? fields : undefined;
}
