/**
 * Loading directives and knowledge through the executor: resolve in the spaces, verify the
 * signature (integrity errors win over parse errors), then parse.
 */
import type {
  DeclaredIdentity,
  ItemContext,
  ItemVerification,
  ResolvedItem,
  SpaceName,
} from '@ryeos/executor';
import { readVerifiedItem } from '@ryeos/executor';
import { isRyeError, normalizeNewlines, RyeError } from '@ryeos/lillux';
import type { ParsedDirective } from './directive.js';
import { parseDirective } from './directive.js';
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
  parse: (text: string, path: string) => T,
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
        parsed = parse(normalizeNewlines(text), found.path);
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
  return load(executor, 'knowledge', id, (text, path) => parseKnowledge(text, path, id), declared, options);
}
