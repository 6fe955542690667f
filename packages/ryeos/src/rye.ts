/**
 * The facade: wires the layers into the operations (`execute`, `sign`, keys). Nothing is loaded
 * at import; the executor is created on first use.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  directiveFacts,
  directiveSearchFields,
  executeDirectiveInline,
  executeKnowledge,
  knowledgeFacts,
  knowledgeSearchFields,
} from '@ryeos/directives';
import type { SearchRequest, SignResult, SpaceName, SystemBundle } from '@ryeos/executor';
import {
  canonicalRef,
  Executor,
  generateSigningKey,
  ITEM_KINDS,
  loadItem,
  loadSigningKey,
  parseRef,
  searchItems,
  signItems,
  signingKeyDir,
  trustKey,
  userSpaceBase,
} from '@ryeos/executor';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { ExecuteMode, Kind } from './execute/matrix.js';
import { checkMatrix, checkModeAlone, parseTarget, parseThread } from './execute/matrix.js';
import { systemSpaceRoot } from './package-root.js';

export interface RyeOptions {
  projectPath?: string;
  userSpace?: string;
  env?: Record<string, string | undefined>;
}

export interface ExecuteRequest {
  item_id: string;
  /** Compatibility with v1 clients; a canonical ref prefix says the same. */
  item_type?: string;
  parameters?: Record<string, unknown>;
  dry_run?: boolean;
  /** Tools only: add resolution, integrity and env steps to the result. */
  trace?: boolean;
  thread?: string;
  target?: string;
  async?: boolean;
  /** Fork only: model override (also accepted inside parameters; top-level wins). */
  model?: string;
  /** Fork only: limit overrides (also accepted inside parameters; top-level wins). */
  limit_overrides?: Record<string, unknown>;
  signal?: AbortSignal;
  /** Tool output as it arrives (used for MCP progress notifications). */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

/** An operation result: `status` is absent only in inline directive replies (`{your_directions}`). */
export type Envelope = Record<string, unknown>;

/** System bundles: this package's `.ai/` first, then those registered in user config (DECISIONS 22). */
async function systemBundles(userSpace: string): Promise<SystemBundle[]> {
  const bundles: SystemBundle[] = [{ id: 'ryeos', root: systemSpaceRoot() }];
  let text: string;
  try {
    text = await readFile(join(userSpace, '.ai', 'config', 'bundles.yaml'), 'utf8');
  } catch {
    return bundles;
  }
  const { parse } = await import('yaml');
  let data: { bundles?: { id?: unknown; path?: unknown }[] } | null;
  try {
    data = parse(text) as typeof data;
  } catch (error) {
    const path = join(userSpace, '.ai', 'config', 'bundles.yaml');
    throw new RyeError('CONFIG', `Invalid ${path}: ${(error as Error).message.split('\n')[0]}`, {
      hint: 'Fix the YAML (bundles: [{id: my-bundle, path: /abs/path}]) or remove the file.',
      details: { path },
    });
  }
  const extra = (data?.bundles ?? [])
    .filter(
      (b): b is { id: string; path: string } => typeof b?.id === 'string' && typeof b?.path === 'string',
    )
    .filter((b) => b.id !== 'ryeos')
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((b) => ({ id: b.id, root: resolve(userSpace, b.path) }));
  return [...bundles, ...extra];
}

export class Rye {
  readonly projectPath: string;
  readonly userSpace: string;
  readonly env: Record<string, string | undefined>;
  private executorPromise: Promise<Executor> | undefined;

  constructor(options: RyeOptions = {}) {
    this.env = options.env ?? process.env;
    this.projectPath = resolve(options.projectPath ?? process.cwd());
    this.userSpace = userSpaceBase(options.userSpace ?? this.env.USER_SPACE);
  }

  executor(): Promise<Executor> {
    this.executorPromise ??= (async () =>
      Executor.create({
        projectPath: this.projectPath,
        userSpace: this.userSpace,
        systemBundles: await systemBundles(this.userSpace),
        env: this.env,
      }))();
    // A failed start (e.g. a broken bundles.yaml) is not remembered: the next call tries again.
    this.executorPromise.catch(() => {
      this.executorPromise = undefined;
    });
    return this.executorPromise;
  }

  /**
   * Runs an item (spec items §7): validates the whole request against the execute matrix first,
   * then routes — tools through their chain, directives inline, knowledge as context. Returns
   * an envelope; never throws.
   */
  async execute(request: ExecuteRequest): Promise<Envelope> {
    const start = performance.now();
    const echo = typeof request.item_id === 'string' ? request.item_id : '';
    let itemId = echo;
    try {
      if (!echo.trim())
        throw new RyeError('VALIDATION', 'item_id is required.', {
          hint: 'Pass a ref such as "tool:rye/bash".',
        });
      const ref = parseRef(echo);
      const mode: ExecuteMode = {
        target: parseTarget(request.target),
        thread: parseThread(request.thread),
        async: request.async === true,
        dryRun: request.dry_run === true,
      };
      checkModeAlone(mode);
      checkForkOptions(request);
      const kind = await this.kindOf(ref.kind, request.item_type, ref.id);
      itemId = canonicalRef(kind, ref.id);
      checkMatrix(kind, mode);
      const parameters = { ...(request.parameters ?? {}) };
      if (mode.target.remote || mode.thread === 'fork' || mode.async)
        return unavailable(kind, mode, itemId, start);
      const executor = await this.executor();
      if (kind === 'knowledge') return await executeKnowledge(executor, ref.id);
      if (kind === 'directive') {
        return await executeDirectiveInline(executor, ref.id, parameters, {
          dryRun: mode.dryRun,
          env: this.env,
        });
      }
      return await executor.executeTool(ref.id, parameters, {
        ...(mode.dryRun ? { dryRun: true } : {}),
        ...(request.trace ? { trace: true } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.onOutput ? { onOutput: request.onOutput } : {}),
      });
    } catch (error) {
      return toErrorEnvelope(error, { item_id: itemId, metadata: { duration_ms: elapsedMs(start) } });
    }
  }

  private async kindOf(
    prefix: string | undefined,
    itemType: string | undefined,
    id: string,
    allowConfig = false,
  ): Promise<Kind> {
    if (itemType !== undefined && !(ITEM_KINDS as readonly string[]).includes(itemType)) {
      throw new RyeError(
        'VALIDATION',
        `Unknown item_type '${itemType}'. Must be directive, tool or knowledge.`,
        {
          hint: 'Drop item_type and use a canonical ref such as "tool:acme/x".',
        },
      );
    }
    if (prefix === 'config' && allowConfig) return 'config' as Kind;
    if (prefix === 'config') {
      throw new RyeError('VALIDATION', 'Config files cannot be executed.', {
        hint: 'Use load to read a config file.',
      });
    }
    if (itemType && prefix && itemType !== prefix) {
      throw new RyeError('VALIDATION', `item_type '${itemType}' contradicts the ref prefix '${prefix}:'`, {
        hint: 'Drop item_type, or make it match the prefix.',
      });
    }
    return (prefix ?? itemType ?? (await this.kindOfPlainId(id))) as Kind;
  }

  /** A plain id must name exactly one kind of item (DECISIONS 1). */
  private async kindOfPlainId(id: string): Promise<Kind> {
    const kinds = await (await this.executor()).kindsOf(id);
    if (kinds.length === 1) return kinds[0]!;
    if (kinds.length === 0) {
      throw new RyeError('NOT_FOUND', `Item not found: ${id}`, {
        hint: 'Check the id, or use a canonical ref such as tool:acme/hello.',
      });
    }
    throw new RyeError(
      'VALIDATION',
      `Ambiguous item_id '${id}': matches ${kinds.join(' and ')}; use ${kinds.map((k) => `'${k}:${id}'`).join(' or ')}`,
    );
  }

  /** Searches items (interfaces §2.1); returns an envelope, never throws. */
  async search(request: SearchRequest): Promise<Envelope> {
    try {
      const executor = await this.executor();
      return {
        ...(await searchItems(executor, request, {
          directive: directiveSearchFields,
          knowledge: knowledgeSearchFields,
        })),
      };
    } catch (error) {
      return toErrorEnvelope(error, { scope: request.scope, query: request.query ?? '' });
    }
  }

  /** Reads (and optionally copies) a verified item (interfaces §2.2); never throws. */
  async load(request: {
    item_id: string;
    item_type?: string;
    source?: string;
    destination?: string;
  }): Promise<Envelope> {
    const echo = typeof request.item_id === 'string' ? request.item_id : '';
    let itemId = echo;
    try {
      const ref = parseRef(echo);
      const kind = await this.kindOf(ref.kind, request.item_type, ref.id, true);
      itemId = canonicalRef(kind, ref.id);
      const source = spaceOption(request.source, ['project', 'user', 'system', 'registry'], 'source');
      const destination = spaceOption(request.destination, ['project', 'user'], 'destination');
      return {
        ...(await loadItem(await this.executor(), {
          kind,
          id: ref.id,
          ...(source ? { source: source as SpaceName } : {}),
          ...(destination ? { destination: destination as 'project' | 'user' } : {}),
          readers: { directive: directiveFacts, knowledge: knowledgeFacts },
        })),
      };
    } catch (error) {
      return toErrorEnvelope(error, { item_id: itemId });
    }
  }

  /** Signs items in project (default) or user space with the user's signing key. */
  async sign(ref: string, options: { space?: 'project' | 'user' } = {}): Promise<SignResult> {
    const keyPair = await loadSigningKey(signingKeyDir(this.userSpace, this.env));
    return signItems(await this.executor(), ref, {
      keyPair,
      readers: { directive: directiveFacts, knowledge: knowledgeFacts },
      ...(options.space ? { space: options.space } : {}),
    });
  }

  /** Creates the signing key (if missing) and trusts it in user space. */
  async generateKeys(options: { force?: boolean } = {}) {
    const dir = signingKeyDir(this.userSpace, this.env);
    const key = await generateSigningKey(dir, options);
    const executor = await this.executor();
    const trustedAt = await trustKey(executor.spaces.user, key.publicKeyPem, 'local');
    return {
      fingerprint: key.fingerprint,
      dir: key.dir,
      created: key.created,
      trusted_at: trustedAt,
      ...(key.backup ? { previous_key_kept_at: key.backup } : {}),
    };
  }

  async trustKey(publicKeyPem: string, options: { owner?: string; space?: 'project' | 'user' } = {}) {
    const executor = await this.executor();
    const space = options.space === 'project' ? executor.spaces.project : executor.spaces.user;
    if (!space) throw new RyeError('VALIDATION', 'No project space: pass --project DIR');
    // A project trust entry counts only when the user's key signs it (see TrustStore).
    const signer =
      space.name === 'project' ? await loadSigningKey(signingKeyDir(this.userSpace, this.env)) : undefined;
    return { trusted_at: await trustKey(space, publicKeyPem, options.owner ?? 'peer', signer) };
  }

  async listKeys() {
    const executor = await this.executor();
    return executor.trust
      .list('system')
      .map(({ fingerprint, owner, space, path }) => ({ fingerprint, owner, space, path }));
  }
}

/** `model` and `limit_overrides` are fork options; check their shape up front. */
function checkForkOptions(request: ExecuteRequest): void {
  const model = request.model ?? request.parameters?.model;
  if (model !== undefined && typeof model !== 'string') {
    throw new RyeError('VALIDATION', 'model must be a string, e.g. "claude-sonnet-4"', {
      hint: 'Pass model as a string.',
    });
  }
  const limits = request.limit_overrides ?? request.parameters?.limit_overrides;
  if (limits === undefined) return;
  if (!limits || typeof limits !== 'object' || Array.isArray(limits)) {
    throw new RyeError('VALIDATION', 'limit_overrides must be an object, e.g. {"turns": 10}', {
      hint: 'Pass an object.',
    });
  }
  const known = ['turns', 'tokens', 'spend', 'spawns', 'duration_seconds', 'depth'];
  const unknown = Object.keys(limits).filter((k) => !known.includes(k));
  if (unknown.length) {
    throw new RyeError(
      'VALIDATION',
      `Unknown limit_overrides: ${unknown.join(', ')}. Valid limits: ${known.join(', ')}`,
      {
        hint: 'Use only the listed limit names.',
      },
    );
  }
}

function spaceOption(value: unknown, allowed: string[], name: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw new RyeError(
      'VALIDATION',
      `Unknown ${name} '${String(value)}'. Must be one of: ${allowed.join(', ')}`,
      {
        hint: `Drop ${name} or use one of the listed spaces.`,
      },
    );
  }
  return value;
}

function elapsedMs(start: number): number {
  return Math.round((performance.now() - start) * 100) / 100;
}

/** Fork, remote and async paths arrive with their own layers; until then they say so. */
function unavailable(kind: Kind, mode: ExecuteMode, itemId: string, start: number): Envelope {
  const what = mode.target.remote
    ? `Remote execution (target="${mode.target.name ? `remote:${mode.target.name}` : 'remote'}")`
    : mode.thread === 'fork'
      ? 'Managed threads (thread="fork")'
      : `async ${kind} execution`;
  return toErrorEnvelope(
    new RyeError('UNAVAILABLE', `${what} is not available yet in this version of ryeos.`, {
      hint:
        kind === 'directive'
          ? 'Execute the directive inline (drop thread/target/async) and follow its directions yourself.'
          : 'Run it locally and synchronously (drop target/async).',
    }),
    { item_id: itemId, metadata: { duration_ms: elapsedMs(start) } },
  );
}

export function createRye(options: RyeOptions = {}): Rye {
  return new Rye(options);
}
