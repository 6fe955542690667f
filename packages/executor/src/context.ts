/**
 * What item operations need from an executor, and nothing more: the spaces, the kind configs,
 * the trust store, the verification flags, the content cache and the readers of the kinds the
 * executor cannot parse itself. Helpers take this, never the whole `Executor`.
 */
import type { ContentCache } from './content-cache.js';
import type { KindRegistry } from './kinds.js';
import type { SignableKind } from './refs.js';
import type { RyeSettings } from './settings.js';
import type { Spaces } from './spaces.js';
import type { TrustStore } from './trust.js';
import type { IntegrityPolicy } from './verify.js';

/** What an item declares about itself, as sign-time validation needs it. */
export interface ItemFacts {
  name?: string | undefined;
  version?: string | undefined;
  category?: string | undefined;
  description?: string | undefined;
  [field: string]: unknown;
}

/** Reads the facts of one file; throws a RyeError naming the problem when it cannot. */
export type FactsReader = (text: string, path: string, extension: string) => ItemFacts;

/** What a kind's metadata reader returns for one file. */
export interface SearchableFields {
  name?: string;
  title?: string;
  description?: string;
  category?: string;
  version?: string;
  tags?: string[];
  created_at?: string;
  updated_at?: string;
  preview?: string;
  metadata?: Record<string, unknown>;
}

export type SearchReader = (text: string, path: string, id: string) => SearchableFields;

/** The readers of one kind: its declared facts (sign, load, moved check) and its search fields. */
export interface KindReaders {
  facts?: FactsReader;
  search?: SearchReader;
  /**
   * Names what these readers return; change it whenever their output changes. A system bundle's
   * index (bundle-index.ts) records search fields under the id of the readers that made them,
   * and they are used only by readers of the same id (none without an id).
   */
  id?: string;
}

/** Readers for the kinds parsed above the executor (directives, knowledge), registered once. */
export type ItemReaders = Partial<Record<Exclude<SignableKind, 'tool' | 'config'>, KindReaders>>;

export interface ItemContext {
  spaces: Spaces;
  kinds: KindRegistry;
  trust: TrustStore;
  integrity: IntegrityPolicy;
  cache: ContentCache;
  readers: ItemReaders;
  /** The entry point's settings, where a helper needs one (an Executor has them all). */
  settings?: Pick<RyeSettings, 'searchWatch' | 'planWatch'>;
}
