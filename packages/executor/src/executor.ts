/**
 * The executor: one object per (project, user space, system bundles) that resolves, verifies
 * and runs tools. Caches (trust files, extractor configs) live on the instance and are keyed by
 * file stats, so a changed file is always re-read.
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import { computeAnchor, dependencyFiles } from './anchor.js';
import { BundleIndexes } from './bundle-index.js';
import type { ChainElement } from './chain.js';
import { buildChain, validateChain } from './chain.js';
import { resolveToolConfig } from './config-resolve.js';
import { ContentCache } from './content-cache.js';
import type { ItemContext, ItemReaders } from './context.js';
import type { ToolEnvelope } from './envelope.js';
import { elapsed } from './envelope.js';
import type { VerifiedLooseFile } from './files.js';
import { readVerifiedFile, verifyLooseFile } from './files.js';
import { KindRegistry } from './kinds.js';
import { extractToolMetadata } from './metadata.js';
import type { ItemKind, SignableKind } from './refs.js';
import { canonicalRef, ITEM_KINDS } from './refs.js';
import type { ResolvedItem } from './resolve.js';
import { resolveItem } from './resolve.js';
import type { RunContext } from './run-chain.js';
import { PRIMITIVE_RUNNERS, prepareRun, runPrimitive } from './run-chain.js';
import { interpreterFiles, runFromSnapshot } from './run-files.js';
import type { RyeSettings } from './settings.js';
import { readSettings } from './settings.js';
import type { SpaceName, SpacesOptions } from './spaces.js';
import { Spaces } from './spaces.js';
import { checkToolParameters } from './tool-parameters.js';
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

export interface ExecuteToolOptions {
  dryRun?: boolean;
  trace?: boolean;
  signal?: AbortSignal;
  onOutput?: RunContext['onOutput'];
}

export interface ChainDetail {
  item_id: string;
  space: string;
  tool_type: string | undefined;
  executor_id: string | null | undefined;
  integrity: string;
}

export type TraceEvent = Record<string, unknown> & { step: string };

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

function detail(element: ChainElement): ChainDetail {
  return {
    item_id: element.id,
    space: element.space.label,
    tool_type: element.metadata.toolType,
    executor_id: element.metadata.executorId,
    integrity: element.verification.hash,
  };
}

function traceOf(chain: ChainElement[]): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (const el of chain) {
    events.push({
      step: 'resolve',
      item_id: el.id,
      path: el.path,
      space: el.space.label,
      searched: el.searched,
      shadowed: el.shadowed,
    });
  }
  for (const el of chain) {
    events.push({
      step: 'verify_integrity',
      item_id: el.id,
      verified: el.verification.verified,
      key_fp: el.verification.fingerprint ?? null,
      ...(el.verification.warnings.length ? { warnings: el.verification.warnings } : {}),
    });
  }
  return events;
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

  readonly cache: ContentCache;
  readonly readers: ItemReaders;
  /** The system bundles' signed indexes (what their files parse to), consulted by the cache. */
  readonly bundleIndexes: BundleIndexes;

  private constructor(spaces: Spaces, trust: TrustStore, options: ExecutorOptions) {
    this.spaces = spaces;
    this.trust = trust;
    this.settings = options.settings ?? readSettings(options.env ?? {}, { userSpace: spaces.user.base });
    this.env = this.settings.env;
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

  static async create(options: ExecutorOptions = {}): Promise<Executor> {
    const spaces = new Spaces(options);
    return new Executor(spaces, await TrustStore.create(spaces), options);
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
    const started = performance.now();
    const itemId = canonicalRef('tool', id);
    const chain: ChainElement[] = [];
    const trace: TraceEvent[] = [];
    try {
      await buildChain(id, this, chain);
      if (options.trace) trace.push(...traceOf(chain));
      const { pairs, warnings } = validateChain(chain);
      // The caller's parameters against what the tool declares, before anything runs.
      await checkToolParameters(id, chain[0]!.metadata, params);
      const verificationWarnings = chain.flatMap((el) => el.verification.warnings);
      const allWarnings = [...verificationWarnings, ...warnings];
      const projectPath = this.spaces.projectPath ?? process.cwd();
      const anchor = computeAnchor(chain, {
        projectPath,
        userSpace: this.spaces.user.base,
        systemSpace: this.spaces.systemSpace ?? '',
      });
      const verifiedFiles: VerifiedLooseFile[] = [];
      for (const file of await dependencyFiles(anchor)) {
        const dependency = await readVerifiedFile(file, chain[0]!.space, this);
        if (!dependency) continue;
        allWarnings.push(...dependency.verification.warnings);
        verifiedFiles.push(dependency);
      }
      const context: RunContext = {
        projectPath,
        userSpace: this.spaces.user.base,
        systemSpace: this.spaces.systemSpace ?? '',
        hostEnv: this.env,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onOutput ? { onOutput: options.onOutput } : {}),
      };
      const configResolve = chain[0]!.metadata.configResolve;
      const runParams =
        configResolve === undefined
          ? params
          : { ...params, resolved_config: await resolveToolConfig(this, configResolve) };
      const prepared = await prepareRun(chain, runParams, anchor, context);
      allWarnings.push(...prepared.warnings);
      // Everything the interpreter is handed from a tools directory verifies — in a dry run too.
      const known = new Set([realpathSync(chain[0]!.path), ...verifiedFiles.map((file) => file.path)]);
      // The command too, when it names a file in a tools folder (`command: "{tool_dir}/run.sh"`).
      const handed = [
        prepared.config.command,
        ...(Array.isArray(prepared.config.args) ? prepared.config.args : []),
      ];
      for (const file of await interpreterFiles(handed, anchor, known, this)) {
        allWarnings.push(...file.verification.warnings);
        verifiedFiles.push(file);
      }
      if (options.dryRun) {
        return {
          status: 'validation_passed',
          message: 'Tool chain validation passed (dry run)',
          item_id: itemId,
          chain: chain.map((el) => el.id),
          validated_pairs: pairs,
          chain_detail: chain.map(detail),
          ...(allWarnings.length ? { warnings: allWarnings } : {}),
          ...(options.trace ? { trace } : {}),
        };
      }
      if (options.trace) trace.push(...prepared.contributions.map((c) => ({ step: 'resolve_env', ...c })));
      // What runs is what was verified (DECISIONS 29): the interpreter loads the snapshot.
      if (PRIMITIVE_RUNNERS[prepared.primitive].runsFiles)
        runFromSnapshot(prepared, chain, anchor, verifiedFiles, this.spaces.user.base);
      const outcome = await runPrimitive(prepared, context);
      if (outcome.warnings) allWarnings.push(...outcome.warnings);
      const common = {
        item_id: itemId,
        chain: chain.map((el) => el.id),
        metadata: elapsed(started),
        ...(allWarnings.length ? { warnings: allWarnings } : {}),
        ...(options.trace ? { trace, chain_detail: chain.map(detail) } : {}),
      };
      if (outcome.success) return { status: 'success', type: 'tool', ...common, data: outcome.data };
      return {
        status: 'error',
        type: 'tool',
        error: outcome.error || 'Tool failed',
        // A tool that reports its own timeout (e.g. rye/bash) is a timeout too.
        error_type:
          outcome.timedOut || (outcome.data as { timed_out?: unknown })?.timed_out === true
            ? 'timeout'
            : 'execution',
        ...common,
        data: outcome.data,
      };
    } catch (error) {
      const envelope = toErrorEnvelope(error, {
        type: 'tool',
        item_id: itemId,
        chain: chain.map((el) => el.id),
        metadata: elapsed(started),
      });
      if (options.trace) envelope.trace = trace.length ? trace : traceOf(chain);
      return envelope;
    }
  }
}
