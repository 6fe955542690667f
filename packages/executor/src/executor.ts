/**
 * The executor: one object per (project, user space, system bundles) that resolves, verifies
 * and runs tools. Caches (trust files, extractor configs) live on the instance and are keyed by
 * file stats, so a changed file is always re-read.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConfineSpec, monotonicMs, RyeError, toErrorEnvelope } from '@ryeos/lillux';
import { BundleIndexes } from './bundle-index.js';
import { ContentCache } from './content-cache.js';
import type { ItemContext, ItemReaders } from './context.js';
import type { ToolEnvelope } from './envelope.js';
import { elapsed } from './envelope.js';
import type { ExecuteToolOptions } from './execute-options.js';
import { verifyLooseFile } from './files.js';
import { KindRegistry } from './kinds.js';
import { EXECUTOR_BUNDLE_ID, executorBundle } from './layer-bundle.js';
import { extractToolMetadata } from './metadata.js';
import { withinOperation } from './observations.js';
import type { ItemKind, SignableKind } from './refs.js';
import { canonicalRef, ITEM_KINDS } from './refs.js';
import type { ResolvedItem } from './resolve.js';
import { resolveItem } from './resolve.js';
import type { RyeSettings } from './settings.js';
import { readSettings } from './settings.js';
import type { SpaceName, SpacesOptions, SystemBundle } from './spaces.js';
import { Spaces } from './spaces.js';
import { withToolSpans } from './tool-spans.js';
import { TrustStore } from './trust.js';
import type { ReadVerifiedOptions, VerifiedItem } from './verified-read.js';
import { findItem, readVerifiedItem, verifyResolvedText } from './verified-read.js';
import type { DeclaredIdentity, IntegrityPolicy, ItemVerification } from './verify.js';

export interface ExecutorOptions extends SpacesOptions {
  /**
   * The entry point's settings (parsed once there): the environment child processes inherit,
   * the integrity switches, the signing key's folder. The executor never reads `process.env`.
   */
  settings?: RyeSettings;
  /** Without `settings`: the environment to parse them from (default: empty). */
  env?: Record<string, string | undefined>;
  /** Readers of the kinds parsed above the executor (directives, knowledge), registered once. */
  readers?: ItemReaders;
  /**
   * Where parsed metadata is cached by content; default `<user>/.ai/state/cache/metadata`,
   * `false` for memory only.
   */
  metadataCacheDir?: string | false;
}

export type { ChainDetail, TraceEvent } from './envelope.js';
export type { ExecuteToolOptions } from './execute-options.js';

/**
 * The disk cache's HMAC key, derived from the user's private signing key (none → memory only).
 * Anyone able to read that key can sign items anyway, so the cache adds no new way in.
 */
function cacheSecret(signingKeyDir: string): Buffer | undefined {
  try {
    const pem = readFileSync(join(signingKeyDir, 'private_key.pem'));
    return createHash('sha256').update('ryeos metadata cache v1\u0000').update(pem).digest();
  } catch {
    return undefined;
  }
}

/**
 * An executor is an item context (what helpers take) plus tool execution; helpers are handed it
 * as an `ItemContext`, so they see only what they need.
 */
export class Executor implements ItemContext {
  readonly spaces: Spaces;
  readonly trust: TrustStore;
  readonly kinds: KindRegistry;
  readonly settings: RyeSettings;
  /** The environment tools inherit and `{env:…}` reads (the settings' own). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly integrity: IntegrityPolicy;
  /** Confinement of every process a tool run starts (the settings' own). */
  readonly confine: ConfineSpec | undefined;

  readonly cache: ContentCache;
  readonly readers: ItemReaders;
  /** The system bundles' signed indexes (what their files parse to), consulted by the cache. */
  readonly bundleIndexes: BundleIndexes;

  private readonly options: ExecutorOptions;
  /** Executors derived with one more system bundle, by bundle id (made once each). */
  private readonly derived = new Map<string, Promise<Executor>>();

  private constructor(spaces: Spaces, trust: TrustStore, options: ExecutorOptions) {
    this.options = options;
    this.spaces = spaces;
    this.trust = trust;
    this.settings = options.settings ?? readSettings(options.env ?? {}, { userSpace: spaces.user.base });
    this.env = this.settings.env;
    this.confine = this.settings.confine;
    this.integrity = {
      devMode: this.settings.devMode,
      acceptLegacySignatures: this.settings.acceptLegacySignatures,
    };
    const cacheDir =
      options.metadataCacheDir === false
        ? undefined
        : (options.metadataCacheDir ?? join(spaces.user.base, '.ai', 'state', 'cache', 'metadata'));
    const debug = this.settings.debug;
    this.bundleIndexes = new BundleIndexes(
      spaces.system,
      trust,
      debug ? (message) => process.stderr.write(`${message}\n`) : undefined,
    );
    this.cache = new ContentCache(
      cacheDir,
      cacheDir ? cacheSecret(this.settings.signingKeyDir) : undefined,
      this.bundleIndexes,
    );
    this.kinds = new KindRegistry(spaces, trust, this.integrity, this.cache);
    this.readers = options.readers ?? {};
  }

  /** Without `systemBundles`, the executor's own bundle is the system space. */
  static async create(options: ExecutorOptions = {}): Promise<Executor> {
    // The user space the settings (or the environment) name is the one searched and trusted: an
    // embedder passing `settings` alone must not find their keys trusted in the home folder.
    const userSpace = options.userSpace ?? options.settings?.userSpace ?? options.env?.USER_SPACE;
    const spaces = new Spaces({
      ...options,
      userSpace,
      systemBundles: options.systemBundles ?? [executorBundle()],
    });
    return new Executor(spaces, await TrustStore.create(spaces), options);
  }

  /**
   * This executor with `bundle` among its system bundles: itself when it has it, else a copy
   * (same project, user space, settings and readers) made once, the bundle placed before the
   * executor's own (or last, when that is the first) so `{system_space}` and the order of the
   * others stay as they are. How a layer
   * above (threads) finds its own items under an embedder's executor.
   */
  withSystemBundle(bundle: SystemBundle): Promise<Executor> {
    const current = this.spaces.system.map((space) => ({
      id: space.bundleId ?? space.label,
      root: space.base,
    }));
    if (current.some((known) => known.id === bundle.id)) return Promise.resolve(this);
    let made = this.derived.get(bundle.id);
    if (!made) {
      // Never first: the first bundle is `{system_space}`, which must not move.
      const at = current.findIndex((known) => known.id === EXECUTOR_BUNDLE_ID);
      const systemBundles =
        at <= 0 ? [...current, bundle] : [...current.slice(0, at), bundle, ...current.slice(at)];
      made = Executor.create({
        ...this.options,
        projectPath: this.spaces.projectPath,
        userSpace: this.spaces.user.base,
        settings: this.settings,
        systemBundles,
      });
      this.derived.set(bundle.id, made);
      made.catch(() => this.derived.delete(bundle.id));
    }
    return made;
  }

  /** The kinds under which a plain id exists in any space (DECISIONS 1). */
  async kindsOf(id: string): Promise<ItemKind[]> {
    const found: ItemKind[] = [];
    for (const kind of ITEM_KINDS) {
      const config = await this.kinds.get(kind);
      if (await resolveItem(this.spaces, kind, id, config.extensions)) found.push(kind);
    }
    return found;
  }

  /**
   * Verifies text already read from a resolved item, so a caller that parses the text verifies
   * exactly what it parsed (no second read in between).
   */
  verifyText(item: ResolvedItem, text: string, declared?: DeclaredIdentity): Promise<ItemVerification> {
    return verifyResolvedText(this, item, text, { declared });
  }

  /**
   * Verifies a file inside some space's `.ai/tools/` as a tool (its space decides trust and dev
   * mode). Throws INTEGRITY when it fails or lies outside every tools directory.
   */
  async verifyToolFile(path: string): Promise<ItemVerification> {
    const verification = await verifyLooseFile(path, this.spaces.user, this, true);
    if (!verification) {
      throw new RyeError('INTEGRITY', `Refusing ${path}: not a file inside a space's .ai/tools directory`, {
        hint: 'Keep runtime files and server configs under .ai/tools/ of a space, signed.',
      });
    }
    return verification;
  }

  /** Finds an item file without verifying it. */
  locate(
    kind: SignableKind,
    id: string,
    options: { from?: SpaceName; only?: SpaceName } = {},
  ): Promise<ResolvedItem | undefined> {
    return findItem(this, kind, id, options);
  }

  /** A tool's declared category (undefined when it declares none or cannot be parsed). */
  toolCategory(text: string, path: string, extension: string): string | undefined {
    const parser = this.kinds.peek('tool')?.parsers[extension];
    if (!parser) return undefined;
    try {
      return extractToolMetadata(text, path, parser, this.cache).category;
    } catch {
      return undefined;
    }
  }

  /**
   * Resolves, reads once and verifies one item file (any kind); throws NOT_FOUND / INTEGRITY.
   * `declared` is what the caller parsed of the item (name, category) for the moved check.
   */
  verifyItemFile(kind: SignableKind, id: string, options: ReadVerifiedOptions = {}): Promise<VerifiedItem> {
    return readVerifiedItem(this, kind, id, options);
  }

  /** Runs a tool through its chain and returns the envelope of spec items §7.4; never throws. */
  async executeTool(
    id: string,
    params: Record<string, unknown> = {},
    options: ExecuteToolOptions = {},
  ): Promise<ToolEnvelope> {
    const started = monotonicMs();
    let run: typeof import('./execute-tool.js').executeTool;
    try {
      ({ executeTool: run } = await import('./execute-tool.js'));
    } catch (error) {
      return toErrorEnvelope(error, {
        type: 'tool',
        item_id: canonicalRef('tool', id),
        metadata: elapsed(started),
      });
    }
    // One look per fact for the whole operation (observations.ts).
    const execute = () => withinOperation(() => run(this, id, params, options));
    // Warming a worker ahead of a call runs nothing: only real runs are traced.
    return options.warmOnly ? execute() : withToolSpans(id, execute);
  }
}
