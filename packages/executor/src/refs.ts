/**
 * Item references: canonical refs `<kind>:<id>` and plain ids (spec items §1.4, DECISIONS 1).
 */
import { RyeError } from '@ryeos/lillux';

export const ITEM_KINDS = ['directive', 'tool', 'knowledge'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];
/** Kinds that can be signed: the item kinds plus config files. The one list of kinds. */
export const SIGNABLE_KINDS = [...ITEM_KINDS, 'config'] as const;
export type SignableKind = (typeof SIGNABLE_KINDS)[number];

export function isSignableKind(word: string): word is SignableKind {
  return (SIGNABLE_KINDS as readonly string[]).includes(word);
}

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

/** The kind a ref's prefix names (`tool:…` → tool), without checking the rest of it. */
export function kindPrefix(ref: string): SignableKind | undefined {
  const trimmed = ref.trim();
  return SIGNABLE_KINDS.find((kind) => trimmed.startsWith(`${kind}:`));
}

export function parseRef(ref: string): ParsedRef {
  const trimmed = ref.trim();
  if (!trimmed)
    throw new RyeError('VALIDATION', 'item_id is required.', { hint: 'Pass a ref such as "tool:rye/bash".' });
  for (const kind of SIGNABLE_KINDS) {
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
