/**
 * Item references: canonical refs `<kind>:<id>` and plain ids (spec items §1.4, DECISIONS 1).
 */
import { RyeError } from '@ryeos/lillux';

export const ITEM_KINDS = ['directive', 'tool', 'knowledge'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];
/** Kinds that can be signed: the item kinds plus config files. */
export type SignableKind = ItemKind | 'config';

export const TYPE_DIRS: Record<SignableKind, string> = {
  directive: 'directives',
  tool: 'tools',
  knowledge: 'knowledge',
  config: 'config',
};

export interface ParsedRef {
  /** Undefined for a plain id whose kind is still to be found. */
  kind: SignableKind | undefined;
  id: string;
}

const PREFIXES: SignableKind[] = ['tool', 'directive', 'knowledge', 'config'];

export function parseRef(ref: string): ParsedRef {
  const trimmed = ref.trim();
  if (!trimmed)
    throw new RyeError('VALIDATION', 'item_id is required.', { hint: 'Pass a ref such as "tool:rye/bash".' });
  for (const kind of PREFIXES) {
    if (trimmed.startsWith(`${kind}:`)) {
      const id = trimmed.slice(kind.length + 1);
      if (!id) {
        throw new RyeError(
          'VALIDATION',
          `Canonical ref must include an ID after '${kind}:' (e.g. '${kind}:my/item')`,
          { hint: `Add the item id after '${kind}:'.` },
        );
      }
      return { kind, id: normalizeId(id) };
    }
  }
  return { kind: undefined, id: normalizeId(trimmed) };
}

export function canonicalRef(kind: SignableKind, id: string): string {
  return `${kind}:${id}`;
}

/**
 * Checks an item id is a relative, slash-separated path that stays inside its space: no `..`
 * segment, no absolute path or drive letter, no empty segment, no backslash.
 */
export function normalizeId(id: string): string {
  const clean = id;
  if (
    clean.startsWith('/') ||
    /^[A-Za-z]:/.test(clean) ||
    clean.includes('\\') ||
    clean.includes('\0') ||
    clean.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')
  ) {
    throw new RyeError('VALIDATION', `Invalid item id '${id}': ids are relative paths inside a space`, {
      hint: "Use a slash-separated id without '..', a leading '/' or a drive letter, e.g. 'acme/text/wordcount'.",
      details: { id },
    });
  }
  return clean;
}
