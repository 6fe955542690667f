/**
 * The one verification path: resolve → read once → verify → `{item, text, verification}`. Tool
 * chains, load, config resolution, search, loose files and the directive loader all come through
 * here, so the bytes a caller gets are always the bytes that were verified, and a new integrity
 * rule lands in `verify.ts` alone.
 */
import { RyeError } from '@ryeos/lillux';
import type { ItemContext } from './context.js';
import { readItemFile } from './item-text.js';
import type { KindConfig } from './kinds.js';
import { formatFor } from './kinds.js';
import { extractToolMetadata } from './metadata.js';
import type { SignableKind } from './refs.js';
import { canonicalRef } from './refs.js';
import type { ResolvedItem } from './resolve.js';
import { findFrom, resolveItem } from './resolve.js';
import type { Space, SpaceName, Spaces } from './spaces.js';
import type { DeclaredIdentity, ItemVerification } from './verify.js';
import { IntegrityError, isIntegrityFailure, verifyItem } from './verify.js';

export interface VerifyTextOptions {
  /** What the item declares about itself, for the moved check (DECISIONS 3). */
  declared?: DeclaredIdentity | undefined;
  /** Config files may be unsigned (spec items §6.5): an unsigned one passes with a warning. */
  allowUnsigned?: boolean;
}

type VerifiableItem = Pick<ResolvedItem, 'path' | 'kind' | 'id' | 'space' | 'extension'>;

/** Verifies text already read from a resolved item; throws `IntegrityError` when it fails. */
export async function verifyResolvedText(
  context: ItemContext,
  item: VerifiableItem,
  text: string,
  options: VerifyTextOptions = {},
): Promise<ItemVerification> {
  return verifyWithConfig(context, await context.kinds.get(item.kind), item, text, options);
}

/** As `verifyResolvedText`, with the kind's config already at hand (synchronous, for indexing). */
export function verifyWithConfig(
  context: Pick<ItemContext, 'trust' | 'integrity' | 'spaces'>,
  config: KindConfig,
  item: VerifiableItem,
  text: string,
  options: VerifyTextOptions = {},
): ItemVerification {
  try {
    return verifyItem(
      {
        path: item.path,
        kind: item.kind,
        id: item.id,
        space: item.space,
        text,
        format: formatFor(config, item.extension),
        legacyRecipe: config.legacyRecipe,
        ...(options.declared ? { declared: options.declared } : {}),
      },
      context.trust,
      context.integrity,
    );
  } catch (error) {
    if (!(options.allowUnsigned && isIntegrityFailure(error, 'unsigned')))
      throw shadowingFailure(context.spaces, config, item, error);
    return {
      outcome: 'unsigned',
      verified: false,
      hash: '',
      warnings: [`Unsigned config file: ${item.path}`],
    };
  }
}

/** What an item declares about its own name and category, read by its kind's reader. */
export function declaredIdentity(
  context: ItemContext,
  item: Pick<ResolvedItem, 'path' | 'kind' | 'extension'>,
  text: string,
): DeclaredIdentity | undefined {
  try {
    if (item.kind === 'tool') {
      const parser = context.kinds.peek('tool')?.parsers[item.extension];
      if (!parser) return undefined;
      return { category: extractToolMetadata(text, item.path, parser, context.cache).category };
    }
    if (item.kind === 'config') return undefined;
    const facts = context.readers[item.kind]?.facts?.(text, item.path, item.extension);
    if (!facts) return undefined;
    return {
      ...(facts.name ? { name: String(facts.name) } : {}),
      ...(facts.category ? { category: String(facts.category) } : {}),
    };
  } catch {
    return undefined; // unreadable metadata: integrity is still checked, and the parse error reported by its reader
  }
}

export interface ReadVerifiedOptions extends VerifyTextOptions {
  /** Search only this space and lower ones. */
  from?: SpaceName;
  /** Search exactly the spaces of this name. */
  only?: SpaceName;
  /** Search exactly this one space (one system bundle). */
  within?: Space;
  /** Accept only these extensions (default: the kind's). */
  extensions?: readonly string[];
  /**
   * Reads what the item declares from the text read (default: the kind's registered reader).
   * A caller that parses the item anyway does it here, so it parses the bytes that are verified.
   */
  declare?: (text: string, item: ResolvedItem) => DeclaredIdentity | undefined;
}

export interface VerifiedItem {
  item: ResolvedItem;
  /** The exact bytes that were verified (a copy writes these, not a re-encoding of `text`). */
  bytes: Buffer;
  text: string;
  verification: ItemVerification;
}

/**
 * Resolves an item, reads it once and verifies those bytes. `declared` defaults to what the
 * kind's registered reader says the item declares. Throws NOT_FOUND or `IntegrityError`.
 */
export async function readVerifiedItem(
  context: ItemContext,
  kind: SignableKind,
  id: string,
  options: ReadVerifiedOptions = {},
): Promise<VerifiedItem> {
  const item = await findItem(context, kind, id, options);
  if (!item) {
    throw new RyeError(
      'NOT_FOUND',
      `Item not found: ${canonicalRef(kind, id)}${options.only ? ` in ${options.only} space` : ''}`,
      {
        hint: options.only ? 'Drop source to search every space.' : 'Check the id, or search for it first.',
        details: { item_type: kind, item_id: canonicalRef(kind, id) },
      },
    );
  }
  const { bytes, text } = readItemFile(item.path);
  const declared =
    options.declared ??
    (options.declare ? options.declare(text, item) : declaredIdentity(context, item, text));
  const verification = await verifyResolvedText(context, item, text, { ...options, declared });
  return { item, bytes, text, verification };
}

/** Finds an item file without verifying it. */
export async function findItem(
  context: ItemContext,
  kind: SignableKind,
  id: string,
  options: Pick<ReadVerifiedOptions, 'from' | 'only' | 'within' | 'extensions'> = {},
): Promise<ResolvedItem | undefined> {
  const extensions = options.extensions ?? (await context.kinds.get(kind)).extensions;
  return resolveItem(context.spaces, kind, id, extensions, {
    ...(options.from ? { from: options.from } : {}),
    ...(options.only ? { only: options.only } : {}),
    ...(options.within ? { within: options.within } : {}),
  });
}

const BELOW: Partial<Record<SpaceName, SpaceName>> = { project: 'user', user: 'system' };

/**
 * A failing item that shadows one of the same id in a lower space (a repository's unsigned
 * `knowledge/rye/agent/core/DirectiveInstruction.md`, say) is not fixed by signing it: that would
 * put its bytes in place of the item it hides. Its error says so, and offers no sign fix.
 */
function shadowingFailure(spaces: Spaces, config: KindConfig, item: VerifiableItem, error: unknown): unknown {
  const below = BELOW[item.space.name];
  if (!below || !isIntegrityFailure(error)) return error;
  let hidden: ReturnType<typeof findFrom>;
  try {
    hidden = findFrom(spaces, item.kind, item.id, config.extensions, below);
  } catch {
    return error;
  }
  if (!hidden) return error;
  const where = hidden.space.name === 'system' ? 'the system item' : `the ${hidden.space.name} item`;
  const ref = canonicalRef(item.kind, item.id);
  const message = [
    ...error.message.split('\n').filter((line) => !line.startsWith('Fix:')),
    `It shadows ${where} of the same id (${hidden.path})`,
    `Fix: delete ${item.path}, unless you mean it to replace ${ref}`,
  ].join('\n');
  return new IntegrityError(error.outcome, message, {
    hint: `This ${item.space.name} file hides ${where} ${ref}: if you did not write it on purpose, delete ${item.path}; sign it only to replace that item with these exact bytes.`,
    details: { ...error.details, shadows: hidden.path, shadows_space: hidden.space.label },
  });
}
