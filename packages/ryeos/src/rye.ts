/**
 * The facade: wires the layers into the operations (`execute`, `sign`, keys). Nothing is loaded
 * at import; the executor is created on first use.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SignResult, SystemBundle, ToolEnvelope } from '@ryeos/executor';
import {
  Executor,
  generateSigningKey,
  loadSigningKey,
  parseRef,
  signItems,
  signingKeyDir,
  trustKey,
  userSpaceBase,
} from '@ryeos/executor';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import { systemSpaceRoot } from './package-root.js';

export interface RyeOptions {
  projectPath?: string;
  userSpace?: string;
  env?: Record<string, string | undefined>;
}

export interface ExecuteRequest {
  item_id: string;
  item_type?: string;
  parameters?: Record<string, unknown>;
  dry_run?: boolean;
  trace?: boolean;
  thread?: string;
  target?: string;
  async?: boolean;
  signal?: AbortSignal;
}

export type Envelope = Record<string, unknown> & { status: string };

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
  const data = parse(text) as { bundles?: { id?: unknown; path?: unknown }[] } | null;
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
    return this.executorPromise;
  }

  /** Runs an item. Tools run through their chain; other kinds arrive with later layers. */
  async execute(request: ExecuteRequest): Promise<Envelope> {
    const echo = request.item_id;
    try {
      const ref = parseRef(request.item_id ?? '');
      if (request.item_type && ref.kind && request.item_type !== ref.kind) {
        throw new RyeError(
          'VALIDATION',
          `item_type '${request.item_type}' contradicts the ref prefix '${ref.kind}:'`,
          {
            hint: 'Drop item_type, or make it match the prefix.',
          },
        );
      }
      const executor = await this.executor();
      const kind = ref.kind ?? request.item_type ?? (await this.kindOfPlainId(ref.id));
      if (kind !== 'tool') {
        throw new RyeError('VALIDATION', `Executing ${kind} items is not available yet in this version`, {
          hint: 'Only tools can be executed for now.',
        });
      }
      const envelope: ToolEnvelope = await executor.executeTool(ref.id, request.parameters ?? {}, {
        ...(request.dry_run ? { dryRun: true } : {}),
        ...(request.trace ? { trace: true } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      return envelope;
    } catch (error) {
      return toErrorEnvelope(error, { item_id: echo });
    }
  }

  /** A plain id must name exactly one kind of item (DECISIONS 1). */
  private async kindOfPlainId(id: string): Promise<string> {
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

  /** Signs items in project (default) or user space with the user's signing key. */
  async sign(ref: string, options: { space?: 'project' | 'user' } = {}): Promise<SignResult> {
    const keyPair = await loadSigningKey(signingKeyDir(this.userSpace, this.env));
    return signItems(await this.executor(), ref, {
      keyPair,
      ...(options.space ? { space: options.space } : {}),
    });
  }

  /** Creates the signing key (if missing) and trusts it in user space. */
  async generateKeys(options: { force?: boolean } = {}) {
    const dir = signingKeyDir(this.userSpace, this.env);
    const key = await generateSigningKey(dir, options);
    const executor = await this.executor();
    const trustedAt = await trustKey(executor.spaces.user, key.publicKeyPem, 'local');
    return { fingerprint: key.fingerprint, dir: key.dir, created: key.created, trusted_at: trustedAt };
  }

  async trustKey(publicKeyPem: string, options: { owner?: string; space?: 'project' | 'user' } = {}) {
    const executor = await this.executor();
    const space = options.space === 'project' ? executor.spaces.project : executor.spaces.user;
    if (!space) throw new RyeError('VALIDATION', 'No project space: pass --project DIR');
    return { trusted_at: await trustKey(space, publicKeyPem, options.owner ?? 'peer') };
  }

  async listKeys() {
    const executor = await this.executor();
    return executor.trust
      .list('system')
      .map(({ fingerprint, owner, space, path }) => ({ fingerprint, owner, space, path }));
  }
}

export function createRye(options: RyeOptions = {}): Rye {
  return new Rye(options);
}
